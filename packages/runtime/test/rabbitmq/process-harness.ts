import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the next JSON line the process prints that satisfies `match`. */
  line(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Every JSON line printed so far. */
  readonly lines: Array<Record<string, unknown>>;
  /** kill -9, and wait for the process to be gone. */
  kill(): Promise<void>;
}

/** Starts test/rabbitmq/fixtures/worker-process.ts in its own Node process. */
export function startWorkerProcess(settings: Record<string, unknown>): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
    env: { ...process.env, JFAST_TEST_WORKER: JSON.stringify(settings) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines: Array<Record<string, unknown>> = [];
  const listeners = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (text) => {
    lines.push(JSON.parse(text) as Record<string, unknown>);
    for (const listener of [...listeners]) listener();
  });
  return {
    child,
    lines,
    line(match, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < lines.length; seen++) {
            if (match(lines[seen]!)) {
              done();
              return resolve(lines[seen]!);
            }
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`worker process printed no matching line within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        const onExit = () => {
          done();
          reject(new Error(`worker process exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr}`));
        };
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off("exit", onExit);
        };
        listeners.add(check);
        child.once("exit", onExit);
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
