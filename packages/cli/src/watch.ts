import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { CommandIO } from "./command.js";

/** Changes here are not the service's code: dependencies, the embedded database, build output, VCS. */
const IGNORED = /(^|[\\/])(node_modules|\.jfast|\.git|dist|\.next|\.turbo|coverage)([\\/]|$)/;
const WATCHED = /\.(ts|mts|cts|tsx|js|mjs|cjs|json|toml|sql)$/;
const DEBOUNCE_MS = 150;

/**
 * `jfast dev --watch`: runs `jfast dev` (the same arguments, without --watch) as a child process and starts
 * it again when a file of the service changes. A child, because an ES module once imported cannot be
 * imported afresh. The child stops as on SIGTERM (in-flight jobs are released), so a restart loses nothing.
 * SIGTERM/SIGINT to this process reach the child, and the exit code is the child's.
 */
export async function watchAndRestart(params: { root: string; args: readonly string[]; io: CommandIO }): Promise<number> {
  const bin = fileURLToPath(new URL("../bin/jfast.js", import.meta.url));
  const { io, root } = params;
  let child: ChildProcess | null = null;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  let childExited: Promise<number> = Promise.resolve(0);

  let restarting = false;
  const launch = () => {
    // Its own process group: Ctrl-C in a terminal reaches this process only, which passes it on once.
    const started = spawn(process.execPath, [bin, "dev", ...params.args], { cwd: io.cwd, stdio: "inherit", detached: true });
    child = started;
    restarting = false;
    childExited = new Promise((resolve) =>
      started.once("exit", (code, signal) => {
        if (!stopping && !restarting) io.err(`jfast: the service exited (${signal ?? `code ${code}`}); it starts again on the next change\n`);
        resolve(code ?? (signal ? 1 : 0));
      }),
    );
  };
  const stopChild = async (): Promise<number> => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return childExited;
    running.kill("SIGTERM");
    return childExited;
  };

  const onChange = (dir: string) => (_event: string, file: string | Buffer | null) => {
    const name = file ? path.join(dir, String(file)) : null;
    if (stopping || !name || IGNORED.test(name) || !WATCHED.test(name)) return;
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      // A restart under way starts the service on the files as they are by then.
      if (restarting) return;
      io.err(`jfast: ${path.relative(io.cwd, path.join(root, name)) || name} changed: restarting\n`);
      restarting = true;
      void stopChild().then(() => {
        if (!stopping) launch();
      });
    }, DEBOUNCE_MS);
  };
  // The root's own files (jfast.toml, server.ts) and, recursively, each of its folders but the ignored ones:
  // a recursive watch of the root would walk all of node_modules.
  const watchers: FSWatcher[] = [];
  try {
    watchers.push(watch(root, onChange("")));
    for (const entry of readdirSync(root, { withFileTypes: true })) {
      if (entry.isDirectory() && !IGNORED.test(entry.name) && !entry.name.startsWith(".")) {
        watchers.push(watch(path.join(root, entry.name), { recursive: true }, onChange(entry.name)));
      }
    }
  } catch (error) {
    for (const w of watchers) w.close();
    io.err(`jfast: cannot watch ${root}: ${(error as Error).message}\n`);
    return 1;
  }

  launch();
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  // A second signal goes straight to the child, which then stops waiting for its running jobs.
  const signal = await signalled;
  stopping = true;
  clearTimeout(restartTimer);
  for (const w of watchers) w.close();
  const forwardAgain = (again: NodeJS.Signals) => (child as ChildProcess | null)?.kill(again);
  process.on("SIGTERM", forwardAgain);
  process.on("SIGINT", forwardAgain);
  (child as ChildProcess | null)?.kill(signal);
  const code = await childExited;
  process.off("SIGTERM", forwardAgain);
  process.off("SIGINT", forwardAgain);
  return code;
}
