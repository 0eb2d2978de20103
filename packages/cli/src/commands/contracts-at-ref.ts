import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { inspectContractsSources, readPayloadSchemas, selectModuleFiles, type ContractsInspection, type PayloadSchemaEntry } from "@jfast/runtime";
import { CliError } from "../errors.js";
import { ensureTypeScriptLoader } from "../typescript-loader.js";

const DOCS = "jfast docs contracts#jfast-contracts-diff";

/**
 * The contracts of the service at `root` as they were at `ref`: contracts.toml and the module sources read
 * from git's objects (`git ls-tree`, `git cat-file`), never checked out, so the working tree is untouched.
 * A service directory that did not exist at `ref` reads as a service with no modules.
 * Throws ContractsFileError when contracts.toml at `ref` is broken, CliError when git cannot answer.
 */
export async function inspectContractsAtRef(params: { root: string; ref: string }): Promise<ContractsInspection> {
  const { root, ref } = params;
  const toplevel = (await git(["rev-parse", "--show-toplevel"], root).catch((cause: unknown) => {
    if (cause instanceof CliError) throw cause;
    throw new CliError(`${root} is not inside a git repository`, {
      code: "NOT_A_GIT_REPOSITORY",
      hint: "run jfast contracts diff in a clone of the service's repository",
      docs: DOCS,
      cause,
    });
  })).toString("utf8").trim();
  const commit = await resolveCommit(ref, root);
  // The service's directory inside the repository, "apps/example/" (empty at the top).
  const prefix = (await git(["rev-parse", "--show-prefix"], root)).toString("utf8").trim();

  const entries = parseTree(await git(["ls-tree", "-r", "-z", commit, "--", `${prefix}contracts.toml`, `${prefix}modules/`], toplevel));
  const files = new Map(entries.map((e) => [e.path.slice(prefix.length), e.object]));
  const { modules, sources } = selectModuleFiles([...files.keys()].filter((p) => p.startsWith("modules/")));
  const contractsObject = files.get("contracts.toml");
  const texts = await readBlobs([...(contractsObject ? [contractsObject] : []), ...sources.map((p) => files.get(p)!)], toplevel);
  const label = `${ref}:${prefix.replace(/\/$/, "") || "."}`;
  return inspectContractsSources({
    root: label,
    contracts: contractsObject ? { path: `${ref}:${prefix}contracts.toml`, text: texts.get(contractsObject)! } : null,
    modules,
    sources: sources.map((p) => ({ path: p, text: texts.get(files.get(p)!)! })),
  });
}

async function resolveCommit(ref: string, cwd: string): Promise<string> {
  try {
    return (await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`], cwd)).toString("utf8").trim();
  } catch (cause) {
    if (cause instanceof CliError) throw cause;
    throw new CliError(`git does not know the commit "${ref}"`, {
      code: "UNKNOWN_REF",
      hint: `name a branch, tag or commit that exists here; in CI, fetch the base branch first (actions/checkout with fetch-depth: 0, or git fetch origin <branch>)`,
      docs: DOCS,
      cause,
    });
  }
}

/** `git ls-tree -z` lines: "<mode> <type> <object>\t<path>". Only regular files: a symlink's blob is its target. */
function parseTree(output: Buffer): Array<{ path: string; object: string }> {
  const out: Array<{ path: string; object: string }> = [];
  for (const line of output.toString("utf8").split("\0")) {
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    const [mode, type, object] = line.slice(0, tab).split(" ");
    if (type === "blob" && (mode === "100644" || mode === "100755")) out.push({ path: line.slice(tab + 1), object: object! });
  }
  return out;
}

/** Every blob in one `git cat-file --batch`: "<object> blob <size>\n<content>\n" per object asked for. */
async function readBlobs(objects: readonly string[], cwd: string): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const unique = [...new Set(objects)];
  if (unique.length === 0) return texts;
  const output = await git(["cat-file", "--batch"], cwd, `${unique.join("\n")}\n`);
  let offset = 0;
  for (const object of unique) {
    const headerEnd = output.indexOf(0x0a, offset);
    const [, type, size] = output.subarray(offset, headerEnd).toString("utf8").split(" ");
    if (type !== "blob") throw new Error(`git cat-file: expected a blob for ${object}, got "${output.subarray(offset, headerEnd).toString("utf8")}"`);
    const start = headerEnd + 1;
    texts.set(object, output.subarray(start, start + Number(size)).toString("utf8"));
    offset = start + Number(size) + 1;
  }
  return texts;
}

/**
 * The payload schemas the service's tasks declared at `ref`: the service's folder at that commit is written to
 * `<root>/.jfast/contracts-base-*` (inside the service, so its imports find the service's node_modules), its
 * tasks files are imported there, and the folder is removed. Code is loaded, not run: no task, no connection.
 */
export async function payloadSchemasAtRef(params: { root: string; ref: string }): Promise<PayloadSchemaEntry[]> {
  const { root, ref } = params;
  const commit = await resolveCommit(ref, root);
  const prefix = (await git(["rev-parse", "--show-prefix"], root)).toString("utf8").trim().replace(/\/$/, "");
  const toplevel = (await git(["rev-parse", "--show-toplevel"], root)).toString("utf8").trim();
  const exists = await git(["cat-file", "-e", prefix ? `${commit}:${prefix}` : commit], toplevel).then(
    () => true,
    () => false,
  );
  if (!exists) return [];
  const dir = path.join(root, ".jfast", `contracts-base-${randomBytes(4).toString("hex")}`);
  await mkdir(dir, { recursive: true });
  try {
    const tar = await git(["archive", "--format=tar", prefix ? `${commit}:${prefix}` : commit], toplevel);
    await run("tar", ["-x", "-f", "-", "-C", dir], tar);
    return await payloadSchemasNow(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The payload schemas the tasks under `root` declare. A service whose module files never mention a schema has
 * none: its tasks files are not imported (nothing to load, nothing that could fail to).
 */
export async function payloadSchemasNow(root: string): Promise<PayloadSchemaEntry[]> {
  if (!(await mentionsSchema(path.join(root, "modules")))) return [];
  await ensureTypeScriptLoader();
  return readPayloadSchemas(root);
}

async function mentionsSchema(dir: string): Promise<boolean> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() ? await mentionsSchema(full) : /\.[cm]?[jt]sx?$/.test(entry.name) && /\bschema\b/.test(await readFile(full, "utf8"))) return true;
  }
  return false;
}

function run(command: string, args: readonly string[], input: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let err = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${err.trim()}`))));
    child.stdin!.on("error", () => {});
    child.stdin!.end(input);
  });
}

function git(args: readonly string[], cwd: string, input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => (err += chunk));
    child.on("error", (error) =>
      reject(
        (error as NodeJS.ErrnoException).code === "ENOENT"
          ? new CliError("jfast contracts diff needs git, which is not on the PATH", { code: "GIT_MISSING", hint: "install git", docs: DOCS, cause: error })
          : error,
      ),
    );
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`git ${args.join(" ")} exited with ${code}: ${err.trim()}`))));
    if (input !== undefined) {
      // git answers a bad object on stdout and keeps reading; an early exit surfaces through "close".
      child.stdin!.on("error", () => {});
      child.stdin!.end(input);
    }
  });
}
