/**
 * Named queues (docs/queues.md): a service may declare several (`[queues.<name>]`), each with its own worker
 * slots. Each named queue is a backend instance of its own over the same store, so the QueueBackend seam does
 * not change and the `default` queue is exactly the queue a service had before (same rows, keys, broker queues).
 */
export const DEFAULT_QUEUE = "default";

/** A named queue's name: short, lower-case, no "." or ":" so the backend names derived from it cannot collide. */
export const QUEUE_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/;

/**
 * The name a backend uses for a named queue: the service's `[plugin.queue] name` itself for `default` (nothing
 * moves), `<name>:<queue>` for the others. `[plugin.queue] name` cannot contain ":", so no configured queue
 * name equals a derived one: a PostgreSQL `queue` column value, a Redis hash tag `{jfast.jobs:media}`, a
 * RabbitMQ queue `jfast.jobs:media` with its own `.delay.<n>` cascade and `.dead`.
 */
export function backendQueueName(base: string, queue: string): string {
  return queue === DEFAULT_QUEUE ? base : `${base}:${queue}`;
}
