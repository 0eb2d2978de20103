import { DEFAULT_QUEUE, type Jfast, type QueueProvider } from "@jfast/runtime";
import { CliError } from "./errors.js";

/**
 * The service's paused tasks (docs/worker.md#pausing-a-task) for `jfast queue pause|resume`, after checking the
 * task is one the service declares: a pause of a misspelt name would hold nothing and say nothing.
 */
export function pausesFor(jfast: Jfast, task: string): NonNullable<QueueProvider["pauses"]> {
  if (!jfast.tasks.get(task)) {
    throw new CliError(`this service declares no task named "${task}"`, {
      code: "TASK_UNKNOWN",
      hint: `known tasks: ${jfast.tasks.names().join(", ") || "(none)"}`,
      docs: "jfast docs worker#pausing-a-task",
    });
  }
  // A task's pause is kept with its own named queue (docs/queues.md).
  const queue = jfast.require<QueueProvider>("queue").queueOf(task);
  if (!queue.pauses) {
    throw new CliError(`the ${queue.backend.kind} queue has no shared place to keep paused tasks`, {
      code: "PAUSE_UNSUPPORTED",
      hint: `enable the "database" plugin so every process reads paused tasks from jfast_paused_tasks`,
      docs: "jfast docs worker#pausing-a-task",
    });
  }
  return queue.pauses;
}

/**
 * `jfast queue pause|resume --queue <name>`: every task the service declares on that named queue, with the
 * queue's paused-task store.
 */
export function queueTasks(jfast: Jfast, name: string): { tasks: string[]; pauses: NonNullable<QueueProvider["pauses"]> } {
  const queue = jfast.require<QueueProvider>("queue").queue(name);
  if (!queue.pauses) {
    throw new CliError(`the ${queue.backend.kind} queue has no shared place to keep paused tasks`, {
      code: "PAUSE_UNSUPPORTED",
      hint: `enable the "database" plugin so every process reads paused tasks from jfast_paused_tasks`,
      docs: "jfast docs worker#pausing-a-task",
    });
  }
  const tasks = jfast.tasks.all().filter((t) => (t.options.queue ?? DEFAULT_QUEUE) === name).map((t) => t.name);
  if (tasks.length === 0) {
    throw new CliError(`no task of this service runs on queue "${name}"`, {
      code: "QUEUE_EMPTY",
      hint: `declare one with task("<module>.<name>", { queue: "${name}" }, handler)`,
      docs: "jfast docs queues#cli",
    });
  }
  return { tasks, pauses: queue.pauses };
}
