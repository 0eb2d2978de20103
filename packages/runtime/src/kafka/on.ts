import { currentDeclarationScope } from "../core/declarations.js";
import type { Event } from "../core/event.js";
import type { AppContext } from "../core/task.js";

/**
 * `on(topic, handler)`: how a service listens to other services' events on Kafka. Declared at import in a
 * module's tasks file, registered before the consumer starts. This file must not load kafkajs: a service
 * that declares handlers but never starts the kafka plugin loads no driver.
 */

/** What an `on` handler receives besides the event. */
export interface EventHandlerTools {
  /** The running app's context: `ctx.require("outbox")` works exactly as in a route or a task. */
  ctx: AppContext;
  topic: string;
  partition: number;
  /** The message's offset, as Kafka writes it (a decimal string: offsets exceed 2^53). */
  offset: string;
  /** Keeps the consumer's group membership alive during a long handler (call it every few seconds). */
  heartbeat(): Promise<void>;
}

export type EventHandler = (event: Event, tools: EventHandlerTools) => unknown;

export interface EventHandlerOptions {
  /** Shown in logs and in the events health check; defaults to `<module>.<export name>`. */
  name?: string;
}

export interface EventHandlerDefinition {
  readonly kind: "on";
  readonly topic: string;
  readonly handler: EventHandler;
  /** Resolved at discovery when not given: `<module>.<export name>`. */
  name: string | null;
  module: string | null;
  file: string | null;
}

/** Kafka's own rule for topic names. */
const TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

export function validateTopic(topic: unknown): string | null {
  if (typeof topic !== "string" || !TOPIC.test(topic) || topic === "." || topic === "..") {
    return `${JSON.stringify(topic)} is not a Kafka topic name: use letters, digits, ".", "_" and "-" (at most 249), e.g. "orders"`;
  }
  return null;
}

export function on(topic: string, handler: EventHandler): EventHandlerDefinition;
export function on(topic: string, options: EventHandlerOptions, handler: EventHandler): EventHandlerDefinition;
export function on(topic: string, a: EventHandlerOptions | EventHandler, b?: EventHandler): EventHandlerDefinition {
  const definition = defineEventHandler(topic, a, b);
  const scope = currentDeclarationScope();
  if (scope) {
    definition.module = scope.module;
    definition.file = scope.file;
    const list = store.get(scope.file) ?? [];
    list.push(definition);
    store.set(scope.file, list);
  }
  return definition;
}

export function defineEventHandler(
  topic: string,
  optionsOrHandler: EventHandlerOptions | EventHandler,
  maybeHandler?: EventHandler,
): EventHandlerDefinition {
  const handler = typeof optionsOrHandler === "function" ? (optionsOrHandler as EventHandler) : maybeHandler;
  const options: EventHandlerOptions = typeof optionsOrHandler === "function" ? {} : (optionsOrHandler ?? {});
  const invalid = validateTopic(topic);
  if (invalid) throw new TypeError(`on(topic, handler): ${invalid}`);
  if (typeof handler !== "function") {
    throw new TypeError(`on("${topic}") needs a handler function: on("${topic}", async (event, { ctx }) => {})`);
  }
  return { kind: "on", topic, handler, name: options.name ?? null, module: null, file: null };
}

/**
 * Handlers declared by one tasks file, named after the exports holding them. Keyed by file because ES modules
 * are evaluated once per process: a second app built in the same process finds what the first import declared.
 */
export function eventHandlersOf(module: { name: string; file: string; exports: Record<string, unknown> }): EventHandlerDefinition[] {
  const declared = store.get(module.file) ?? [];
  declared.forEach((definition, index) => {
    if (definition.name) return;
    const exportName = Object.entries(module.exports).find(([, value]) => value === definition)?.[0];
    definition.name = exportName ? `${module.name}.${exportName}` : `${module.name}.on(${definition.topic})#${index + 1}`;
  });
  return [...declared];
}

const KEY = Symbol.for("jfast.event-handlers");
const store: Map<string, EventHandlerDefinition[]> =
  ((globalThis as Record<symbol, unknown>)[KEY] as Map<string, EventHandlerDefinition[]> | undefined) ?? new Map();
(globalThis as Record<symbol, unknown>)[KEY] = store;
