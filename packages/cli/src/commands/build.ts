import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { contractsGraph } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError } from "../errors.js";
import { resolveRoot } from "../service.js";

const DOCS = "jfast docs getting-started#compiled";
/** Written beside contracts.toml in the output: the contracts graph of the sources (read by the admin API). */
const GRAPH_FILE = "contracts.graph.json";
/** Sources tsc compiles; everything else under modules/ is an asset the code may read at run time. */
const TYPESCRIPT = /\.(ts|tsx|mts|cts)$/;
const SKIPPED = new Set(["node_modules", ".git", ".jfast", "dist", "build"]);

export default defineCommand({
  name: "build",
  summary: "compile the service into a runnable folder (default dist/) with everything the runtime reads",
  description: `
Compiles the service's TypeScript with the project's own TypeScript (tsc -p tsconfig.json, into --out with the
layout kept: server.js or app.js, modules/<name>/tasks.js), then copies what the runtime reads beside the code:
jfast.toml, contracts.toml, and every file under modules/ that is not TypeScript (SQL, Lua, JSON, templates).
It also writes contracts.graph.json, the contracts graph of the sources, which the admin API (the dashboard's
contracts view) reads in the compiled folder instead of parsing compiled code: jfast start --root dist shows the
contracts the source tree has, with no TypeScript installed. A package.json with the project's "type" is
written too, so the folder runs where it is copied. Run it from a full install (TypeScript is a build-time
dependency); the output runs with jfast start --root dist and jfast worker --root dist.`,
  flags: {
    out: { type: "string", placeholder: "DIR", default: "dist", description: "the output folder, relative to the service root" },
    tsconfig: { type: "string", placeholder: "FILE", default: "tsconfig.json", description: "the TypeScript project to compile, relative to the service root" },
    root: ROOT_FLAG,
  },
  examples: ["jfast build", "jfast build --out build --tsconfig tsconfig.build.json"],
  docs: DOCS,
  async run({ flags, io }) {
    const root = resolveRoot(flags.root, io.cwd);
    const out = path.resolve(root, flags.out as string);
    if (out === root || !out.startsWith(`${root}${path.sep}`)) throw new CliError(`--out must be a folder inside the service root, not ${out}`, { code: "BUILD_OUT_INVALID", hint: "jfast build --out dist", docs: DOCS });
    const tsconfig = path.resolve(root, flags.tsconfig as string);
    if (!existsSync(tsconfig)) throw new CliError(`no ${path.relative(root, tsconfig)} in ${root}`, { code: "TSCONFIG_MISSING", hint: "add a tsconfig.json (module NodeNext) or name one with --tsconfig", docs: DOCS });
    const tsc = projectTsc(root);
    await rm(out, { recursive: true, force: true });
    const started = performance.now();
    // The project's settings, with what a build needs over them: emit (many tsx projects set noEmit), the layout kept.
    await compile(tsc, ["-p", tsconfig, "--outDir", out, "--rootDir", root, "--noEmit", "false", "--declaration", "false", "--incremental", "false"], root);
    const copied: string[] = [];
    for (const file of ["jfast.toml", "contracts.toml"]) {
      if (existsSync(path.join(root, file))) {
        await copyFile(path.join(root, file), path.join(out, file));
        copied.push(file);
      }
    }
    for (const file of await assets(root, path.join(root, "modules"), out)) {
      await mkdir(path.dirname(path.join(out, file)), { recursive: true });
      await copyFile(path.join(root, file), path.join(out, file));
      copied.push(file);
    }
    const type = JSON.parse(await readFile(path.join(root, "package.json"), "utf8").catch(() => "{}")) as { type?: string };
    await writeFile(path.join(out, "package.json"), `${JSON.stringify({ private: true, type: type.type ?? "commonjs" }, null, 2)}\n`);
    const graph = await contractsGraph(root);
    await writeFile(path.join(out, GRAPH_FILE), `${JSON.stringify({ format: 1, graph }, null, 2)}\n`);
    io.out(
      `built ${path.relative(io.cwd, out) || "."} in ${Math.round(performance.now() - started)} ms: compiled with ${path.relative(root, tsconfig)}, copied ${copied.length} file${copied.length === 1 ? "" : "s"} (${copied.slice(0, 6).join(", ")}${copied.length > 6 ? ", …" : ""}), wrote ${GRAPH_FILE} and package.json\n` +
        `run it: jfast start --root ${path.relative(io.cwd, out) || "."}   and   jfast worker --root ${path.relative(io.cwd, out) || "."}\n`,
    );
    return 0;
  },
});

/** tsc of the project's own TypeScript: the version its code is written for. */
function projectTsc(root: string): string {
  try {
    return createRequire(path.join(root, "package.json")).resolve("typescript/bin/tsc");
  } catch (cause) {
    throw new CliError("jfast build compiles with the project's TypeScript, which is not installed here", {
      code: "TYPESCRIPT_MISSING",
      hint: "npm install --save-dev typescript (a build-time dependency: the compiled folder runs without it)",
      docs: DOCS,
      cause,
    });
  }
}

function compile(tsc: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve()
        : reject(new CliError(`tsc found errors; nothing was built\n${output.trim()}`, { code: "BUILD_FAILED", hint: "fix the errors above (npx tsc --noEmit shows the same)", docs: DOCS })),
    );
  });
}

/** Files under modules/ that tsc does not emit, relative to the root: assets, and JavaScript tsc did not copy. */
async function assets(root: string, dir: string, out: string): Promise<string[]> {
  const found: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (SKIPPED.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    const relative = path.relative(root, full);
    if (entry.isDirectory()) found.push(...(await assets(root, full, out)));
    else if (entry.isFile() && !TYPESCRIPT.test(entry.name) && !existsSync(path.join(out, relative))) found.push(relative);
  }
  return found;
}
