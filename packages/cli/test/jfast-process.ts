import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(fileURLToPath(import.meta.url), "../../../..");
export const JFAST_BIN = path.join(REPO_ROOT, "packages/cli/bin/jfast.js");

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `jfast <args>` to completion; `node` is the Node.js binary to run it on (this one by default). */
export function runJfast(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; node?: string } = {}): Promise<RunResult> {
  const child = startJfast(args, options);
  return child.exited;
}

export interface JfastProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<RunResult>;
  /** Resolves when stderr or stdout contains `text`; rejects if the process exits first or after `timeoutMs`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
}

export function startJfast(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; node?: string } = {}): JfastProcess {
  const child = spawn(options.node ?? process.execPath, [JFAST_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    // A variable given as undefined is left out (Node reads some, NODE_DISABLE_COMPILE_CACHE among them, even empty).
    env: Object.fromEntries(Object.entries({ ...process.env, JFAST_DEBUG: "", ...options.env }).filter(([, value]) => value !== undefined)),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stdout!.on("data", (chunk) => {
    stdout += chunk;
    for (const l of listeners) l();
  });
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
    for (const l of listeners) l();
  });
  const timeout = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 50_000);
  const exited = new Promise<RunResult>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timeout);
      for (const l of listeners) l();
      resolve({ code, signal, stdout, stderr });
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitFor(text, timeoutMs = 30_000) {
      const seen = () => (typeof text === "string" ? (stdout + stderr).includes(text) : text.test(stdout + stderr));
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (seen()) finish();
          else if (done) finish(new Error(`jfast exited before printing ${text}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        };
        const timer = setTimeout(() => finish(new Error(`timed out waiting for ${text}\nstdout:\n${stdout}\nstderr:\n${stderr}`)), timeoutMs);
        function finish(error?: Error) {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        }
        listeners.add(check);
        check();
      });
    },
  };
}

/**
 * A throwaway service root: jfast.toml plus files. Lives in the OS temp dir with a node_modules link to the
 * workspace so its TypeScript imports "@jfast/runtime" exactly as a real service does.
 */
export async function createServiceRoot(files: Record<string, string>): Promise<{ root: string; remove(): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-cli-test-"));
  await symlink(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
  await writeFile(path.join(root, "package.json"), JSON.stringify({ name: "test-service", private: true, type: "module" }));
  for (const [file, content] of Object.entries(files)) {
    const target = path.join(root, file);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}
