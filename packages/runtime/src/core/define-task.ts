import { recordDeclaration } from "./declarations.js";
import type { TaskDefinition, TaskHandler, TaskOptions } from "./task.js";

/**
 * Declares a task in its module's tasks file:
 *   task("invoice.send_email", { session: true }, async (payload, { session, ctx, job }) => { ... })
 * The name is the wire contract and is prefixed by the owning module.
 */
export function task<P = any>(name: string, handler: TaskHandler<P>): TaskDefinition<P>;
export function task<P = any>(name: string, options: TaskOptions<P>, handler: TaskHandler<P>): TaskDefinition<P>;
export function task<P = any>(
  name: string,
  optionsOrHandler: TaskOptions<P> | TaskHandler<P>,
  maybeHandler?: TaskHandler<P>,
): TaskDefinition<P> {
  const definition = defineTask(name, optionsOrHandler, maybeHandler);
  recordDeclaration(definition);
  return definition;
}

export function defineTask<P>(
  name: string,
  optionsOrHandler: TaskOptions<P> | TaskHandler<P>,
  maybeHandler?: TaskHandler<P>,
): TaskDefinition<P> {
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
  if (options.idempotentOn && !options.session) {
    throw new TypeError(
      `task("${name}"): idempotentOn needs session: true, because the inbox claim commits with the handler's work`,
    );
  }
  return { kind: "task", name, options, handler, module: null, file: null };
}
