import { parentPort } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { importDeclarations } from "../../core/declarations.js";
import { Job } from "../../core/job.js";
import { Snooze } from "../../core/outcome.js";
import type { AppContext, TaskDefinition } from "../../core/task.js";
import { JfastError } from "../../errors/jfast-error.js";
import { sendable, type FromIsolate, type ToIsolate } from "./protocol.js";
import { progressProblem, type JobLog, type JobProgress } from "../../core/job-life.js";

/**
 * An isolate: a worker thread or a child process that runs the handlers of tasks declared with `isolate`
 * (docs/tasks.md#isolated-handlers). It imports the tasks file that declared the task, runs one attempt at a time
 * and answers with its outcome. The worker terminates it when an attempt times out or is cancelled.
 */
const send: (message: FromIsolate) => void = parentPort
  ? (message) => parentPort!.postMessage(message)
  : (message) => process.send!(message);

const files = new Map<string, Promise<TaskDefinition[]>>();
const running = new Map<number, AbortController>();

function definitionsOf(file: string, module: string | null): Promise<TaskDefinition[]> {
  let loaded = files.get(file);
  if (!loaded) {
    loaded = importDeclarations(module ?? "", file, () => import(pathToFileURL(file).href)).then((r) => r.definitions);
    files.set(file, loaded);
  }
  return loaded;
}

async function run(message: Extract<ToIsolate, { type: "run" }>): Promise<void> {
  const controller = new AbortController();
  running.set(message.id, controller);
  try {
    const definitions = await definitionsOf(message.file, message.module);
    const definition = definitions.find((d) => d.name === message.task);
    if (!definition) throw new Error(`${message.file} declares no task named "${message.task}" when imported in an isolate`);
    const job = Job.fromJSON(message.job);
    const value = await definition.handler(job.payload, {
      ctx: isolatedContext(message.service),
      job,
      session: undefined,
      signal: controller.signal,
      locals: {},
      // Not carried back to the worker's main thread (docs/jobs.md#progress): checked, then dropped.
      progress: checkOnlyProgress,
      log: STDERR_LOG,
    });
    if (value instanceof Snooze) send({ type: "snooze", id: message.id, ms: value.ms });
    else send({ type: "done", id: message.id, value: carried(value) });
  } catch (error) {
    send({ type: "failed", id: message.id, error: sendable(error) });
  } finally {
    running.delete(message.id);
  }
}

/**
 * The handler's value as the main thread gets it (stored as the job's result, core/result.ts): a structured clone,
 * or, for a value holding what a thread cannot carry (a function), its JSON form, which is what would be stored;
 * the job then completes as it would in the main thread instead of failing its attempt.
 */
function carried(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return structuredClone(value);
  } catch {
    try {
      const text = JSON.stringify(value);
      return text === undefined ? undefined : (JSON.parse(text) as unknown);
    } catch {
      return undefined;
    }
  }
}

/** The app's providers live in the worker's main thread: an isolated handler reaches none of them. */
function isolatedContext(serviceName: string): AppContext {
  return {
    serviceName,
    require(name: string): never {
      throw new JfastError(`ctx.require("${name}") is not available to an isolated handler: providers live in the worker's main thread`, {
        code: "ISOLATE_NO_PROVIDERS",
        hint: "open what the handler needs inside it (a client of its own), or drop `isolate` from the task and keep the handler off CPU-heavy work",
        docs: "jfast docs tasks#isolated-handlers",
      });
    },
  } as AppContext;
}

function receive(message: ToIsolate): void {
  if (message.type === "load") {
    // A file that fails to import fails the attempts that need it, with its error; the isolate is ready anyway.
    void Promise.allSettled(message.files.map((f) => definitionsOf(f.file, f.module))).then(() => send({ type: "ready" }));
  } else if (message.type === "run") void run(message);
  else running.get(message.id)?.abort(Object.assign(new Error(message.reason.message), { name: message.reason.name }));
}

if (parentPort) parentPort.on("message", receive);
else {
  process.on("message", (message) => receive(message as ToIsolate));
  // The worker's process is gone (or closed the channel): nothing will ever ask this one for anything again.
  process.on("disconnect", () => process.exit(0));
}

function checkOnlyProgress(value: JobProgress): void {
  const problem = progressProblem(value);
  if (problem) throw new TypeError(`tools.progress: ${problem}`);
}

/** An isolated handler's `tools.log`: lines go to the isolate's stderr (the worker's), not kept with the attempt. */
const STDERR_LOG: JobLog = {
  info: (message, fields) => console.error(JSON.stringify({ level: "info", msg: message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: "warn", msg: message, ...fields })),
  error: (message, fields) => console.error(JSON.stringify({ level: "error", msg: message, ...fields })),
};
