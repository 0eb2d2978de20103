import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const FIXTURE = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** The first JSON line the process printed. */
  first: Promise<Record<string, unknown>>;
  /** kill -9, and wait for the process to be gone. */
  kill(): Promise<void>;
}

/** Starts tests/redis/fixtures/worker-process.ts in its own Node process. */
export function startWorkerProcess(settings: Record<string, unknown>): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
    env: { ...process.env, JFAST_TEST_WORKER: JSON.stringify(settings) },
    // stdin stays open: the child exits when it closes, so a crashed test run leaves no worker behind.
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve(JSON.parse(line) as Record<string, unknown>));
    child.once("exit", (code, signal) => reject(new Error(`worker process exited early (${code ?? signal}): ${stderr}`)));
  });
  first.catch(() => undefined);
  return {
    child,
    first,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
