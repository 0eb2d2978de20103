import { TRPCError } from "@trpc/server";
import type { PausedTask } from "../core/pause.js";
import { JfastError } from "../errors/jfast-error.js";
import type { OperatorContext } from "./audit-call.js";
import { pauseQueue, pauseTask, resumeQueue, resumeTask } from "./operations/pause-tasks.js";
import { retryDeadLetters } from "./operations/retry-dead.js";
import { requireQueue } from "./queue-access.js";
import { queueScope } from "./queue-scope.js";
import type { AdminSources } from "./sources.js";

/**
 * The admin API's repairs for a program in the service's own process (`jfast jobs retry`, `jfast queue pause`):
 * the same operations the admin API runs, audited the same way, with `actor` as who did it
 * (docs/admin-api.md#audit-trail). Whoever runs them holds the service's configuration and credentials already,
 * so there is no token to check.
 */
export interface AdminRepairs {
  /** Where the entries go: the service's database (`sql`), or this process's memory and logs (no database plugin). */
  readonly auditStore: "memory" | "sql";
  /** Requeues the dead letters named, or all of them; `queue` picks a named queue (default: `default`). */
  retryDead(params: ({ ids: string[] } | { all: true }) & { queue?: string }): Promise<{ retried: string[]; missing: string[] }>;
  pauseTask(task: string): Promise<PausedTask>;
  /** True when the task was paused. */
  resumeTask(task: string): Promise<boolean>;
  pauseQueue(queue: string): Promise<PausedTask[]>;
  resumeQueue(queue: string): Promise<{ tasks: string[]; resumed: number }>;
}

export function createRepairs(sources: AdminSources, actor: string): AdminRepairs {
  const ctx: OperatorContext = { principal: { name: actor, role: "operator" }, sources, tokensConfigured: true, presented: actor };
  return {
    get auditStore() {
      return sources.audit.kind;
    },
    retryDead: (params) =>
      explained(() => {
        const queue = queueScope(requireQueue(sources), params.queue);
        return retryDeadLetters(ctx, queue, "all" in params ? { all: true, queueName: params.queue } : { ids: params.ids, queueName: params.queue });
      }),
    pauseTask: (task) => explained(() => pauseTask(ctx, task)),
    resumeTask: (task) => explained(() => resumeTask(ctx, task)),
    pauseQueue: (queue) => explained(() => pauseQueue(ctx, queue)),
    resumeQueue: (queue) => explained(() => resumeQueue(ctx, queue)),
  };
}

/** An admin API refusal, as the error a program (the CLI) reports: its message, a code, the docs page. */
async function explained<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    throw new JfastError(error.message, { code: `ADMIN_${error.code}`, docs: "jfast docs admin-api#audit-trail", cause: error.cause ?? error });
  }
}
