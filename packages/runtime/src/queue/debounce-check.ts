import { notSupported } from "../core/backend/capabilities.js";
import { checkDebounce } from "../core/debounce.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { TaskDefinition } from "../core/task.js";

/**
 * At start, before any enqueue: each debounced task of a queue (docs/flow-control.md#debounce) has a well-formed option,
 * and the queue's backend can fold its jobs; else start-up stops naming the task and the reason.
 */
export function checkDebouncedTasks(tasks: readonly TaskDefinition[], backend: QueueBackend, queue: string): void {
  for (const task of tasks) {
    const option = task.options.debounce;
    if (option === undefined) continue;
    checkDebounce(option as never, `task "${task.name}"`);
    if (task.options.unique !== undefined) {
      throw new TypeError(`task "${task.name}": debounce and unique cannot be combined: debounce folds a key's jobs into one, unique refuses the later ones (jfast docs flow-control#throttle)`);
    }
    if (!backend.capabilities.debounce) {
      throw notSupported(
        "debounce",
        `task "${task.name}" debounces its jobs, but the ${backend.kind} queue "${queue}" cannot: a message waiting in the broker can be neither found by its key nor changed, so a later job of the key cannot be folded into it`,
        { hint: `run the task on a queue of another backend ([queues.<name>] backend = "postgres" or "redis", and queue = "<name>" on the task)` },
      );
    }
  }
}
