import type { TaskSession } from "./task-session.js";
import { recordDeclaration } from "./declarations.js";
import { QUEUE_NAME_PATTERN } from "./named-queue.js";
import { invalidPriority, Job, priorityProblem } from "./job.js";
import type { SchemaInput, SchemaOutput, StandardSchemaV1 } from "./payload-schema.js";
import type { Task, TaskHandler, TaskOptions } from "./task.js";
import { normalizeLimits } from "./limits.js";
import { normalizeUnique } from "./unique.js";

/**
 * Declares a task in its module's tasks file:
 *   export const sendEmail = task("invoice.send_email", { session: true }, async (payload: SendEmail, { session, ctx, job }) => { ... })
 * The name is the wire contract and is prefixed by the owning module. `sendEmail.job(payload)` makes its jobs.
 * The handler's `session` is the drizzle transaction with `session: true`, undefined without.
 */
/** With a schema (docs/tasks.md#payload-schemas): `job()` takes the schema's input, the handler gets its output. */
export function task<S extends StandardSchemaV1<unknown, unknown>, R = unknown>(
  name: string,
  options: Omit<TaskOptions<SchemaOutput<S>>, "schema"> & { schema: S; session: true; isolate?: undefined },
  handler: TaskHandler<SchemaOutput<S>, TaskSession, R>,
): Task<SchemaOutput<S>, Awaited<R>, SchemaInput<S>>;
export function task<S extends StandardSchemaV1<unknown, unknown>, R = unknown>(
  name: string,
  options: Omit<TaskOptions<SchemaOutput<S>>, "schema"> & { schema: S } & ({ isolate?: undefined } | { session?: false }),
  handler: TaskHandler<SchemaOutput<S>, undefined, R>,
): Task<SchemaOutput<S>, Awaited<R>, SchemaInput<S>>;
export function task<P = unknown, R = unknown>(
  name: string,
  // An isolated handler runs off the main thread, where the transaction is not (docs/tasks.md#isolated-handlers).
  options: TaskOptions<P> & { session: true; isolate?: undefined },
  handler: TaskHandler<P, TaskSession, R>,
): Task<P, Awaited<R>>;
export function task<P = unknown, R = unknown>(name: string, handler: TaskHandler<P, undefined, R>): Task<P, Awaited<R>>;
export function task<P = unknown, R = unknown>(
  name: string,
  options: TaskOptions<P> & ({ isolate?: undefined } | { session?: false }),
  handler: TaskHandler<P, undefined, R>,
): Task<P, Awaited<R>>;
export function task<P>(name: string, optionsOrHandler: TaskOptions<P> | AnyTaskHandler<P>, maybeHandler?: AnyTaskHandler<P>): Task<P> {
  // The overloads above tie the handler's session to the options; inside, a handler takes either.
  const definition = defineTask(name, optionsOrHandler as TaskOptions<P> | TaskHandler<P>, maybeHandler as TaskHandler<P> | undefined);
  recordDeclaration(definition);
  return definition;
}

/** A handler with or without a session, as the overloads of `task` take it. */
export type AnyTaskHandler<P> = TaskHandler<P, TaskSession> | TaskHandler<P, undefined>;

/** `task` without recording the declaration (tests, the registry form). Its handler may or may not take a session. */
export function defineTask<P>(name: string, optionsOrHandler: TaskOptions<P> | TaskHandler<P>, maybeHandler?: TaskHandler<P>): Task<P> {
  const handler = typeof optionsOrHandler === "function" ? optionsOrHandler : maybeHandler;
  const options = typeof optionsOrHandler === "function" ? {} : optionsOrHandler;
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError("task(name, options?, handler) needs a name such as \"invoice.send_email\"");
  }
  if (typeof handler !== "function") {
    throw new TypeError(`task("${name}") needs a handler function: task("${name}", { ...options }, async (payload, { ctx, job }) => {})`);
  }
  if (options.maxAttempts !== undefined && (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1)) {
    throw new TypeError(`task("${name}"): maxAttempts must be a whole number of at least 1`);
  }
  if (options.queue !== undefined && (typeof options.queue !== "string" || !QUEUE_NAME_PATTERN.test(options.queue))) {
    throw new TypeError(`task("${name}"): queue must be a queue name such as "media" (lower-case letters, digits, "_" and "-", starting with a letter)`);
  }
  if (options.priority !== undefined && priorityProblem(options.priority) !== null) {
    throw invalidPriority(`task("${name}")`, options.priority);
  }
  if (options.unique !== undefined) {
    if (options.unique.key !== undefined && typeof options.unique.key !== "function") {
      throw new TypeError(`task("${name}"): unique.key is a function of the payload that returns the key`);
    }
    normalizeUnique({ ...options.unique, key: undefined } as Parameters<typeof normalizeUnique>[0], `task("${name}")`, false);
  }
  normalizeLimits(options, `task("${name}")`);
  if (options.schema !== undefined && typeof options.schema?.["~standard"]?.validate !== "function") {
    throw new TypeError(
      `task("${name}"): schema must be a Standard Schema (a zod, valibot or arktype schema, …: an object with ["~standard"].validate), see docs/tasks.md#payload-schemas`,
    );
  }
  if (options.encrypt !== undefined && typeof options.encrypt !== "boolean") {
    throw new TypeError(`task("${name}"): encrypt must be true or false, got ${JSON.stringify(options.encrypt)}`);
  }
  if (options.isolate !== undefined) {
    if (options.isolate !== "thread" && options.isolate !== "process") {
      throw new TypeError(`task("${name}"): isolate must be "thread" or "process", got ${JSON.stringify(options.isolate)}`);
    }
    if (options.session) {
      throw new TypeError(
        `task("${name}"): isolate cannot be combined with session: true, because the transaction lives in the worker's main thread; open a connection inside the handler, or drop isolate (docs/tasks.md#isolated-handlers)`,
      );
    }
  }
  if (options.idempotentOn && !options.session) {
    throw new TypeError(
      `task("${name}"): idempotentOn needs session: true, because the inbox claim commits with the handler's work`,
    );
  }
  return {
    kind: "task",
    name,
    options,
    handler,
    module: null,
    file: null,
    job: (payload, jobOptions) =>
      new Job<P>({ ...(options.priority === undefined ? {} : { priority: options.priority }), ...jobOptions, task: name, payload }),
  };
}
