import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Worker as Thread } from "node:worker_threads";
import { siblingModule } from "../../core/lease-extender.js";
import type { Job } from "../../core/job.js";
import { snooze } from "../../core/outcome.js";
import type { Cancellation, IsolateMode, TaskDefinition } from "../../core/task.js";
import { JobTimeoutError } from "../../errors/jfast-error.js";
import { PermanentError } from "../../errors/permanent-error.js";
import type { Logger } from "../../observability/logger.js";
import { startThread, typeScriptLoader } from "../lease/start-thread.js";
import type { FromIsolate, SentError, ToIsolate } from "./protocol.js";

/**
 * Runs the handlers of tasks declared with `isolate: "thread" | "process"` (docs/tasks.md#isolated-handlers) in
 * worker threads or child processes, reused from attempt to attempt. An attempt that times out or is cancelled has
 * its isolate terminated (a CPU-bound handler never reads its signal); an isolate that dies fails only the attempt
 * it was running.
 */
export interface IsolateRunner {
  run(definition: TaskDefinition, job: Job, cancellation: Cancellation): Promise<unknown>;
  close(): Promise<void>;
}

interface Isolate {
  readonly key: string;
  post(message: ToIsolate): void;
  terminate(): void;
  /** The attempt it runs now, if any. */
  current: { id: number; resolve(value: unknown): void; reject(error: unknown): void } | null;
  dead: boolean;
}

/** Thrown for an attempt whose isolate exited or crashed under it. */
export class IsolateCrashed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IsolateCrashed";
  }
}

export function createIsolateRunner(params: {
  serviceName: string;
  logger: Logger;
  maxIdle: number;
  /** Isolates started ahead, one of each, so that the first jobs do not wait for one to start. */
  warm: ReadonlyArray<{ mode: IsolateMode; typescript: boolean }>;
  /** The tasks files an isolate imports as it starts: its handlers' timeouts then count no import. */
  files: ReadonlyArray<{ file: string; module: string | null }>;
}): IsolateRunner {
  const idle: Isolate[] = [];
  /** Isolates started ahead and not up yet, by kind: an attempt waits for one rather than start another. */
  const warming = new Map<string, Promise<Isolate>>();
  const live = new Set<Isolate>();
  let nextId = 1;
  let closed = false;

  function start(mode: IsolateMode, typescript: boolean): Promise<Isolate> {
    const entry = siblingModule(import.meta.url, "isolate-entry");
    const key = `${mode}:${typescript}`;
    return new Promise((resolve, reject) => {
      let isolate: Isolate;
      let ready = false;
      const onMessage = (message: FromIsolate) => {
        if (message.type === "ready") {
          ready = true;
          resolve(isolate);
          return;
        }
        const current = isolate.current;
        if (!current || current.id !== message.id) return;
        isolate.current = null;
        if (message.type === "done") current.resolve(message.value);
        else if (message.type === "snooze") current.resolve(snooze(message.ms));
        else current.reject(received(message.error));
        putBack(isolate);
      };
      const onExit = (how: string) => {
        if (isolate.dead) return;
        isolate.dead = true;
        live.delete(isolate);
        const at = idle.indexOf(isolate);
        if (at >= 0) idle.splice(at, 1);
        if (!ready) reject(new IsolateCrashed(`the ${mode} isolate could not start (${how})`));
        isolate.current?.reject(new IsolateCrashed(`the ${mode} running this attempt ${how}`));
        isolate.current = null;
      };
      if (mode === "thread") {
        const thread: Thread = startThread(entry, { name: "jfast isolate", typescript, stdout: false, stderr: false });
        // Never what keeps the process alive: the worker's own loop does while it runs.
        thread.unref();
        thread.on("message", onMessage);
        thread.on("error", (error) => onExit(`failed: ${error.message}`));
        thread.on("exit", (code) => onExit(`exited with code ${code}`));
        isolate = { key, post: (m) => thread.postMessage(m), terminate: () => void thread.terminate(), current: null, dead: false };
      } else {
        const execArgv = typescript || entry.endsWith(".ts") ? ["--import", typeScriptLoader(".")] : [];
        const child: ChildProcess = fork(fileURLToPath(entry), [], { execArgv, serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
        child.unref();
        child.channel?.unref();
        child.on("message", (m) => onMessage(m as FromIsolate));
        child.on("error", (error) => onExit(`failed: ${error.message}`));
        child.on("exit", (code, signal) => onExit(signal ? `was killed by ${signal}` : `exited with code ${code}`));
        isolate = { key, post: (m) => child.send(m), terminate: () => void child.kill("SIGKILL"), current: null, dead: false };
      }
      live.add(isolate);
      isolate.post({ type: "load", files: params.files });
    });
  }

  function putBack(isolate: Isolate): void {
    if (closed || isolate.dead || idle.length >= params.maxIdle) {
      retire(isolate);
      return;
    }
    idle.push(isolate);
  }

  function retire(isolate: Isolate): void {
    const at = idle.indexOf(isolate);
    if (at >= 0) idle.splice(at, 1);
    live.delete(isolate);
    isolate.terminate();
  }

  /** Starts one more idle isolate of this kind when none is idle (at start, and after one was terminated). */
  function keepWarm(mode: IsolateMode, typescript: boolean): void {
    const key = `${mode}:${typescript}`;
    if (closed || warming.has(key) || idle.some((i) => i.key === key)) return;
    const starting = start(mode, typescript);
    warming.set(key, starting);
    starting.then(
      (isolate) => {
        if (warming.get(key) !== starting) return;
        warming.delete(key);
        putBack(isolate);
      },
      (error: unknown) => {
        warming.delete(key);
        params.logger.warn("could not start an isolate ahead of its jobs", { error, mode });
      },
    );
  }
  for (const kind of params.warm) keepWarm(kind.mode, kind.typescript);

  async function take(mode: IsolateMode, typescript: boolean): Promise<Isolate> {
    const key = `${mode}:${typescript}`;
    const at = idle.findIndex((i) => i.key === key && !i.dead);
    if (at >= 0) return idle.splice(at, 1)[0]!;
    const starting = warming.get(key);
    if (starting) {
      // Taken over from the warm-up: it is this attempt's now, not the idle list's.
      warming.delete(key);
      return starting;
    }
    return start(mode, typescript);
  }

  return {
    async run(definition, job, cancellation) {
      const mode = definition.options.isolate!;
      const file = definition.file!;
      const typescript = isTypeScript(file);
      const isolate = await take(mode, typescript);
      const id = nextId++;
      const timeoutMs = job.timeoutMs ?? definition.options.timeoutMs ?? null;
      return new Promise((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const settle = (fn: (value: unknown) => void) => (value: unknown) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", aborted);
          fn(value);
        };
        isolate.current = { id, resolve: settle(resolve), reject: settle(reject) };
        const signal = cancellation.signal;
        const stop = (reason: unknown) => {
          // Timed out, cancelled or past shutdown's grace: the attempt is over and a handler busy on the CPU would
          // never look at its signal.
          if (isolate.current?.id !== id) return;
          isolate.current = null;
          clearTimeout(timer);
          signal.removeEventListener("abort", aborted);
          retire(isolate);
          keepWarm(mode, typescript);
          reject(reason);
        };
        const aborted = () => stop(signal.reason);
        if (signal.aborted) return aborted();
        signal.addEventListener("abort", aborted, { once: true });
        // From the handler's start in a ready isolate: waiting for an isolate to start is not the handler's time.
        if (timeoutMs !== null) {
          timer = setTimeout(() => stop(new JobTimeoutError(`"${job.task}" ran past its timeout of ${timeoutMs} ms`)), timeoutMs);
        }
        isolate.post({ type: "run", id, file, module: definition.module, task: definition.name, service: params.serviceName, job: job.toJSON() });
      });
    },
    async close() {
      closed = true;
      for (const isolate of [...live]) retire(isolate);
    },
  };
}

export function isTypeScript(file: string): boolean {
  return /\.[cm]?tsx?$/.test(file);
}

function received(error: SentError): Error {
  const made = error.permanent ? new PermanentError(error.message) : new Error(error.message);
  made.name = error.name;
  if (error.stack) made.stack = error.stack;
  return made;
}
