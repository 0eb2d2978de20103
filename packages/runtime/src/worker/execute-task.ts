import type { Job } from "../core/job.js";
import type { AppContext, Cancellation, TaskDefinition, TaskTools } from "../core/task.js";
import type { DatabaseProvider, TaskSession } from "../database/database-provider.js";
import { claimOnce } from "../inbox/inbox.js";
import type { Logger } from "../observability/logger.js";
import type { IsolateRunner } from "./isolate/isolate-runner.js";

/**
 * One attempt of one job: opens the TaskSession when the task asks for it (commit on return, rollback on
 * throw), claims the idempotency key in the inbox inside that same transaction, then calls the handler.
 */
export function createTaskExecutor(params: {
  context: AppContext;
  database: () => DatabaseProvider | null;
  logger: Logger;
  /** Runs the handlers of tasks declared with `isolate` (docs/tasks.md#isolated-handlers). */
  isolates?: IsolateRunner;
}) {
  return function execute(definition: TaskDefinition, job: Job, cancellation: Cancellation): Promise<unknown> {
    if (definition.options.isolate && params.isolates) return params.isolates.run(definition, job, cancellation);
    if (!definition.options.session) {
      // Not an async function: a handler's own promise is handed on as it is, without another wrapper.
      try {
        return Promise.resolve(definition.handler(job.payload, new AttemptTools(params.context, job, undefined, cancellation)));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return inSession(definition, job, cancellation);
  };

  async function inSession(definition: TaskDefinition, job: Job, cancellation: Cancellation): Promise<unknown> {
    const database = params.database();
    if (!database) throw new Error(`task "${definition.name}" needs a session but the database is not started`);
    return database.transaction(
      async (session) => {
        if (definition.options.idempotentOn) {
          const key = String(definition.options.idempotentOn(job.payload));
          const first = await claimOnce(database.executorFor(session), { consumer: definition.name, key });
          if (!first) {
            params.logger.info("skipped: this idempotency key already committed", { idempotency_key: key });
            return undefined;
          }
        }
        return definition.handler(job.payload, new AttemptTools(params.context, job, session, cancellation));
      },
      { tenantId: job.tenantId },
    );
  }
}

/**
 * The handler's second argument. A class, not an object literal with a getter: V8 builds such a literal on its
 * slow path, which cost more per job than the rest of a no-op attempt's bookkeeping. `signal` is read from the
 * cancellation only when the handler reads it (an AbortSignal is dear to make), which is why it is a getter of
 * the class (docs/tasks.md: destructure it or read `tools.signal`).
 */
class AttemptTools implements TaskTools {
  readonly #cancellation: Cancellation;

  constructor(
    readonly ctx: AppContext,
    readonly job: Job,
    readonly session: TaskSession | undefined,
    cancellation: Cancellation,
  ) {
    this.#cancellation = cancellation;
  }

  get signal(): AbortSignal {
    return this.#cancellation.signal;
  }
}
