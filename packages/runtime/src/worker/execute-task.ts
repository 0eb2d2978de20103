import { checkPayload, PayloadInvalidError } from "../core/payload-schema.js";
import { stepInputsOf, type BatchTools, type FlowTools } from "../core/flow-tools.js";
import type { Job } from "../core/job.js";
import type { AppContext, Cancellation, JobLocals, JobMiddleware, TaskDefinition, TaskTools } from "../core/task.js";
import type { DatabaseProvider, TaskSession } from "../database/database-provider.js";
import { claimOnce } from "../inbox/inbox.js";
import type { Logger } from "../observability/logger.js";
import type { IsolateRunner } from "./isolate/isolate-runner.js";
import { progressProblem, type JobLog, type JobProgress } from "../core/job-life.js";
import type { AttemptLife } from "./attempt-life.js";
import { lifeOf } from "./cancellation.js";

/**
 * One attempt of one job: opens the TaskSession when the task asks for it (commit on return, rollback on
 * throw), claims the idempotency key in the inbox inside that same transaction, then calls the handler through
 * the service's middleware (inside the transaction: middleware sees `tools.session`).
 */
export function createTaskExecutor(params: {
  context: AppContext;
  database: () => DatabaseProvider | null;
  logger: Logger;
  /** Runs the handlers of tasks declared with `isolate` (docs/tasks.md#isolated-handlers). */
  isolates?: IsolateRunner;
  /** `createJfast({ middleware })`, outermost first (docs/tasks.md#middleware). */
  middleware?: readonly JobMiddleware[];
}) {
  // None: the handler is called as before, without a promise more per attempt.
  const middleware = params.middleware?.length ? params.middleware : null;
  return function execute(definition: TaskDefinition, job: Job, cancellation: Cancellation): Promise<unknown> {
    const schema = definition.options.schema;
    if (schema) {
      // The stored payload checked again: a job enqueued before a deploy changed the schema dies here, not in the handler.
      return checkPayload(schema, job.payload).then((checked) => {
        if (!checked.ok) throw new PayloadInvalidError(definition.name, checked.issues);
        return run(definition, job, cancellation, checked.value);
      });
    }
    return run(definition, job, cancellation, job.payload);
  };

  function run(definition: TaskDefinition, job: Job, cancellation: Cancellation, payload: unknown): Promise<unknown> {
    if (definition.options.isolate && params.isolates) {
      const isolates = params.isolates;
      if (!middleware) return isolates.run(definition, job, cancellation);
      // The handler runs in the isolate; its middleware here, around it (locals do not cross over).
      const tools = new AttemptTools(params.context, job, undefined, cancellation);
      return throughMiddleware(middleware, tools, () => isolates.run(definition, job, cancellation));
    }
    if (!definition.options.session) {
      // Not an async function: a handler's own promise is handed on as it is, without another wrapper.
      try {
        const tools = new AttemptTools(params.context, job, undefined, cancellation);
        if (middleware) return throughMiddleware(middleware, tools, () => definition.handler(payload, tools));
        return Promise.resolve(definition.handler(payload, tools));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return inSession(definition, job, cancellation, payload);
  }

  async function inSession(definition: TaskDefinition, job: Job, cancellation: Cancellation, payload: unknown): Promise<unknown> {
    const database = params.database();
    if (!database) throw new Error(`task "${definition.name}" needs a session but the database is not started`);
    return database.transaction(
      async (session) => {
        if (definition.options.idempotentOn) {
          const key = String(definition.options.idempotentOn(payload));
          const first = await claimOnce(database.executorFor(session), { consumer: definition.name, key });
          if (!first) {
            params.logger.info("skipped: this idempotency key already committed", { idempotency_key: key });
            return undefined;
          }
        }
        const tools = new AttemptTools(params.context, job, session, cancellation);
        if (middleware) return throughMiddleware(middleware, tools, () => definition.handler(payload, tools));
        return definition.handler(payload, tools);
      },
      { tenantId: job.tenantId },
    );
  }
}

/** Calls `handler` through `middleware`, the first outermost; each `next()` calls the one after it, the last the handler. */
function throughMiddleware(middleware: readonly JobMiddleware[], tools: TaskTools, handler: () => unknown): Promise<unknown> {
  const call = (index: number): Promise<unknown> => {
    if (index === middleware.length) {
      try {
        return Promise.resolve(handler());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    try {
      return Promise.resolve(middleware[index]!(tools.job, tools, () => call(index + 1)));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return call(0);
}

/**
 * The handler's second argument. A class, not an object literal with a getter: V8 builds such a literal on its
 * slow path, which cost more per job than the rest of a no-op attempt's bookkeeping. `signal` is read from the
 * cancellation only when the handler reads it (an AbortSignal is dear to make), which is why it is a getter of
 * the class (docs/tasks.md: destructure it or read `tools.signal`).
 */
class AttemptTools implements TaskTools {
  readonly #cancellation: Cancellation;
  #locals: Partial<JobLocals> | undefined;

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

  /** Read when the handler reads it: a flow step's inputs were loaded before its attempt (core/flow-tools.ts). */
  get flow(): FlowTools | undefined {
    return this.job.flow ? stepInputsOf(this.job)?.flow : undefined;
  }

  get batch(): BatchTools | undefined {
    return this.job.flow ? stepInputsOf(this.job)?.batch : undefined;
  }

  /** A function made on first read, so that `const { progress } = tools` works as `tools.progress` does. */
  get progress(): (value: JobProgress) => void {
    return (this.#progress ??= (value) => this.#report(value));
  }

  #progress: ((value: JobProgress) => void) | undefined;

  #report(value: JobProgress): void {
    const life = this.#life();
    if (life) life.progress(value);
    else {
      // Outside a worker (a handler called directly): checked all the same, kept nowhere.
      const problem = progressProblem(value);
      if (problem) throw new TypeError(`tools.progress: ${problem}`);
    }
  }

  /** Read when the handler logs: an attempt that never does keeps nothing (attempt-life.ts). */
  get log(): JobLog {
    return this.#life()?.log ?? (this.#logOnly ??= loggerOnly(this.ctx.logger));
  }

  #logOnly: JobLog | undefined;

  #life(): AttemptLife | null {
    return lifeOf(this.#cancellation, this.job);
  }

  /** Made on first use: most attempts have no middleware that sets any. */
  get locals(): Partial<JobLocals> {
    return (this.#locals ??= {});
  }
}

/** `tools.log` of a handler run outside a worker: the service's logger only, nothing kept. */
function loggerOnly(logger: Logger | undefined): JobLog {
  return {
    info: (message, fields) => logger?.info(message, fields),
    warn: (message, fields) => logger?.warn(message, fields),
    error: (message, fields) => logger?.error(message, fields),
  };
}
