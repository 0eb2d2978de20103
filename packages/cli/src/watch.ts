import { spawn, type ChildProcess } from "node:child_process";
import { watch, type FSWatcher } from "node:fs";
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

  let watcher: FSWatcher;
  try {
    watcher = watch(root, { recursive: true }, (_event, file) => {
      if (stopping || !file || IGNORED.test(file) || !WATCHED.test(file)) return;
      clearTimeout(restartTimer);
      restartTimer = setTimeout(() => {
        io.err(`jfast: ${path.join(path.relative(io.cwd, root) || ".", file)} changed: restarting\n`);
        restarting = true;
        void stopChild().then(() => {
          if (!stopping) launch();
        });
      }, DEBOUNCE_MS);
    });
  } catch (error) {
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
  watcher.close();
  const forwardAgain = (again: NodeJS.Signals) => (child as ChildProcess | null)?.kill(again);
  process.on("SIGTERM", forwardAgain);
  process.on("SIGINT", forwardAgain);
  (child as ChildProcess | null)?.kill(signal);
  const code = await childExited;
  process.off("SIGTERM", forwardAgain);
  process.off("SIGINT", forwardAgain);
  return code;
}
