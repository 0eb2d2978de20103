import { recordDeclaration } from "../core/declarations.js";
import { Event, type EventJSON } from "../core/event.js";
import type { TaskDefinition, TaskOptions, TaskTools } from "../core/task.js";
import type { TaskSession } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";

/** What `subscribe()` accepts besides the event type. */
export interface SubscribeOptions {
  /**
   * Run inside a TaskSession (commit on return, rollback on throw) and claim the event id in the inbox in
   * that transaction: one effect per event for this subscriber, however often the job is redelivered.
   */
  session?: boolean;
  /** The function part of the task name, kept when the export is renamed; `"<module>.<function>"` outside modules/. */
  name?: string;
  maxAttempts?: number;
  timeoutMs?: number;
  backoffBaseMs?: number;
  /** The named queue its jobs go to (docs/queues.md), as `task(name, { queue })`; default `"default"`. */
  queue?: string;
}

/** `session` is the drizzle transaction with `session: true`, undefined without. */
export type SubscriberHandler<TSession = TaskSession | undefined> = (event: Event, tools: TaskTools<TSession>) => unknown;

/** A subscriber is a task whose payload is the event's wire form; `kind` and `eventType` tell it apart. */
export interface SubscriberDefinition extends TaskDefinition<EventJSON> {
  readonly kind: "subscriber";
  readonly eventType: string;
  /** The `name` option, when given (otherwise discovery names it after its export). */
  readonly explicitName: string | null;
}

const FUNCTION_PART = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MODULE_AND_FUNCTION = /^[a-z0-9_]+\.[A-Za-z_][A-Za-z0-9_]*$/;
const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;

/**
 * Declares a local subscriber in a module's tasks file; export it, its name comes from the export:
 *   export const checkBudget = subscribe("receipt.registered", { session: true }, async (event, { session, ctx }) => { ... })
 * The task is "receipt.registered->alert.checkBudget". `outbox.publish` writes one job per subscriber.
 */
export function subscribe(type: string, options: SubscribeOptions & { session: true }, handler: SubscriberHandler<TaskSession>): SubscriberDefinition;
export function subscribe(type: string, handler: SubscriberHandler<undefined>): SubscriberDefinition;
export function subscribe(type: string, options: SubscribeOptions, handler: SubscriberHandler<undefined>): SubscriberDefinition;
export function subscribe(
  type: string,
  optionsOrHandler: SubscribeOptions | SubscriberHandler<TaskSession> | SubscriberHandler<undefined>,
  maybeHandler?: SubscriberHandler<TaskSession> | SubscriberHandler<undefined>,
): SubscriberDefinition {
  // The overloads above tie the handler's session to the options; inside, a handler takes either.
  const definition = defineSubscriber(type, optionsOrHandler as SubscribeOptions | SubscriberHandler, maybeHandler as SubscriberHandler | undefined);
  recordDeclaration(definition);
  return definition;
}

export function defineSubscriber(
  type: string,
  optionsOrHandler: SubscribeOptions | SubscriberHandler,
  maybeHandler?: SubscriberHandler,
): SubscriberDefinition {
  const handler = typeof optionsOrHandler === "function" ? optionsOrHandler : maybeHandler;
  const options: SubscribeOptions = typeof optionsOrHandler === "function" ? {} : (optionsOrHandler ?? {});
  if (typeof type !== "string" || !EVENT_TYPE.test(type)) {
    throw new TypeError(`subscribe(type, ...) needs an event type such as "receipt.registered" (got ${JSON.stringify(type)})`);
  }
  if (typeof handler !== "function") {
    throw new TypeError(`subscribe("${type}") needs a handler: subscribe("${type}", { session: true }, async (event, { session, ctx }) => {})`);
  }
  const explicitName = options.name ?? null;
  if (explicitName !== null && !FUNCTION_PART.test(explicitName) && !MODULE_AND_FUNCTION.test(explicitName)) {
    throw new TypeError(
      `subscribe("${type}", { name: ${JSON.stringify(explicitName)} }): name is the function part ("checkBudget"), or "<module>.<function>" outside modules/`,
    );
  }
  if (options.maxAttempts !== undefined && (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1)) {
    throw new TypeError(`subscribe("${type}"): maxAttempts must be a whole number of at least 1`);
  }
  const taskOptions: TaskOptions<EventJSON> = {
    ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.backoffBaseMs !== undefined ? { backoffBaseMs: options.backoffBaseMs } : {}),
    ...(options.queue !== undefined ? { queue: options.queue } : {}),
    // The inbox claim is keyed by the event id under this subscriber's task name (the consumer): another
    // subscriber of the same event claims separately, a redelivery to this one is skipped.
    ...(options.session ? { session: true, idempotentOn: (payload: EventJSON) => payload.id } : {}),
  };
  return {
    kind: "subscriber",
    // "<type>->" until named: discovery completes it from the export, `name` with a module completes it now.
    name: explicitName !== null && explicitName.includes(".") ? `${type}->${explicitName}` : `${type}->`,
    eventType: type,
    explicitName,
    options: taskOptions,
    handler: (payload, tools) => handler(Event.fromJSON(payload), tools),
    module: null,
    file: null,
  };
}

export function isSubscriber(definition: TaskDefinition): definition is SubscriberDefinition {
  return definition.kind === "subscriber";
}

/**
 * Names the subscribers one tasks file declared, `<type>-><module>.<export name>` (or the `name` option).
 * Module namespaces are evaluated once per process, so naming is idempotent: the same file, the same names.
 */
export function nameSubscribers(params: {
  module: string;
  file: string;
  definitions: readonly TaskDefinition[];
  exports: Record<string, unknown>;
}): void {
  for (const definition of params.definitions) {
    if (!isSubscriber(definition) || !definition.name.endsWith("->")) continue;
    let functionPart = definition.explicitName;
    if (functionPart === null) {
      const names = Object.keys(params.exports).filter((key) => key !== "default" && params.exports[key] === definition);
      if (names.length !== 1) {
        throw new ConfigError(
          names.length === 0
            ? `modules/${params.module}: a subscriber to "${definition.eventType}" is not exported, so it has no task name`
            : `modules/${params.module}: a subscriber to "${definition.eventType}" is exported as ${names.join(" and ")}; its task name would be ambiguous`,
          {
            code: "SUBSCRIBER_UNNAMED",
            hint:
              names.length === 0
                ? `export it once: export const checkBudget = subscribe("${definition.eventType}", ...), or pass { name: "checkBudget" }`
                : `keep one export, or pin the name with subscribe("${definition.eventType}", { name: "${names[0]}" }, ...)`,
            docs: "jfast docs events#subscribing",
          },
        );
      }
      functionPart = names[0]!;
    }
    if (!FUNCTION_PART.test(functionPart)) {
      throw new ConfigError(`modules/${params.module}: subscriber name "${functionPart}" must be a plain identifier`, {
        code: "TASK_NAME_INVALID",
        hint: `pass { name: "checkBudget" } (the module is added for you)`,
        docs: "jfast docs events#subscribing",
      });
    }
    (definition as { name: string }).name = `${definition.eventType}->${params.module}.${functionPart}`;
  }
}

/** This service's subscribers of one event type, by name so the jobs come out in a stable order. */
export function subscribersOf(definitions: readonly TaskDefinition[], type: string): SubscriberDefinition[] {
  return definitions
    .filter((d): d is SubscriberDefinition => isSubscriber(d) && d.eventType === type)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
