import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(fileURLToPath(import.meta.url), "../../..");
export const JFAST_BIN = path.join(REPO_ROOT, "packages/cli/bin/jfast.js");

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  readonly output: string;
  exited: Promise<Exit>;
  waitFor(text: string, timeoutMs?: number): Promise<void>;
}

/**
 * Runs a command to its end as a user's shell would: without npm's environment (npm_* variables, INIT_CWD,
 * NODE_PATH), which `npm test` would otherwise leak into an `npm pack` or `npm ci` of the test's own.
 */
export function runClean(command: string, args: string[], cwd: string, timeoutMs = 300_000): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== "INIT_CWD" && key !== "NODE_PATH"));
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    // A command that hangs (an install waiting on the network) ends the test instead of stalling it.
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** runClean, failing with the command's output unless it exits 0. */
export async function runCleanOk(command: string, args: string[], cwd: string): Promise<Exit> {
  const result = await runClean(command, args, cwd);
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Starts a process and collects its output. `group` puts it in its own process group (npx forks a child). */
export function start(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; group?: boolean } = {}): Running {
  const child = spawn(command, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, JFAST_DEBUG: "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.group ?? false,
  });
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout!.on("data", (c) => ((stdout += c), notify()));
  child.stderr!.on("data", (c) => ((stderr += c), notify()));
  let done = false;
  const exited = new Promise<Exit>((resolve) =>
    child.on("close", (code, signal) => {
      done = true;
      notify();
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return {
    child,
    get output() {
      return stdout + stderr;
    },
    exited,
    waitFor(text, timeoutMs = 120_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if ((stdout + stderr).includes(text)) finish();
          else if (done) finish(new Error(`exited before printing ${JSON.stringify(text)}:\n${stdout}${stderr}`));
        };
        const timer = setTimeout(() => finish(new Error(`timed out waiting for ${JSON.stringify(text)}:\n${stdout}${stderr}`)), timeoutMs);
        function finish(error?: Error) {
          clearTimeout(timer);
          listeners.delete(check);
          error ? reject(error) : resolve();
        }
        listeners.add(check);
        check();
      });
    },
  };
}

/** `jfast <args>` as a process (the bin the workspace installs). */
export function startJfast(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Running {
  return start(process.execPath, [JFAST_BIN, ...args], options);
}

export async function jfast(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Exit> {
  return startJfast(args, options).exited;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Polls `probe` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(probe: () => Promise<T | undefined>, params: { timeoutMs?: number; intervalMs?: number; what: string }): Promise<T> {
  const deadline = Date.now() + (params.timeoutMs ?? 60_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, params.intervalMs ?? 250));
  }
  throw new Error(`timed out waiting for ${params.what}${last ? `: ${(last as Error).message}` : ""}`);
}
