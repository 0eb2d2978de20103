import type { Jfast, QueueBackend } from "@jfast/runtime";
import { CliError } from "./errors.js";
import { openService } from "./service.js";

/**
 * Opens the service's queue for an inspection or repair command (`jfast jobs …`), without its server.ts and
 * without a worker. `use` runs with the backend; the app is stopped afterwards whatever happens.
 */
export async function withQueue<T>(
  root: string,
  use: (backend: QueueBackend, jfast: Jfast) => Promise<T>,
  /** `--queue`: the named queue whose backend `use` gets (default: `default`). */
  queueName?: string,
): Promise<T> {
  const { jfast } = await openService({ root, entry: false, quiet: true, background: false });
  try {
    if (!jfast.config.queue) {
      throw new CliError(`the queue plugin is not enabled in ${jfast.config.file}`, {
        code: "QUEUE_DISABLED",
        hint: `add "queue" to [plugins] enabled`,
        docs: "jfast docs configuration#pluginqueue",
      });
    }
    const provider = jfast.require("queue");
    const backend = queueName === undefined ? provider.backend : provider.queue(queueName).backend;
    if (backend.kind === "memory") {
      throw new CliError("the memory backend keeps its jobs inside the process that runs them; another process cannot see them", {
        code: "MEMORY_BACKEND",
        hint: `use backend = "postgres" (embedded or with a url), "redis" or "rabbitmq" in [plugin.queue] to manage jobs from the command line`,
        docs: "jfast docs cli#jfast-jobs",
      });
    }
    return await use(backend, jfast);
  } finally {
    await jfast.stop();
  }
}

/**
 * Refuses, before anything is asked of the queue, a repair its backend cannot do: the backend says what it can in
 * `capabilities` (docs/backends.md#capabilities), and a command checks there rather than trying and failing.
 */
export function requireJobActions(backend: QueueBackend, command: string): void {
  if (backend.capabilities.jobActions) return;
  throw new CliError(`the ${backend.kind} queue cannot ${command} a waiting job: a message waiting in the broker cannot be taken out of its queue`, {
    code: "NOT_SUPPORTED",
    hint: "cancel it instead (jfast jobs cancel <id>): the worker that receives it drops it; or use the postgres or redis backend",
    docs: "jfast docs backends#capabilities",
  });
}

/**
 * Explains ids that a retry/discard did not find among dead letters: unknown, or a job that exists but is
 * not dead (running, waiting). One line each, for stderr.
 */
export async function explainMissing(backend: QueueBackend, ids: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const id of ids) {
    const info = await backend.getJob({ id });
    lines.push(info ? `jfast: ${id} is not a dead letter (it is ${info.state})` : `jfast: no job with id ${id}`);
  }
  return lines;
}
