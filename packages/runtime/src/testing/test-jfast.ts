import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createMemoryBackend, type MemoryBackend } from "../backends/memory/memory-backend.js";
import { Job } from "../core/job.js";
import type { FlowPlan } from "../core/flow.js";
import type { JobInfo } from "../core/queue-backend.js";
import type { Task, TaskDefinition } from "../core/task.js";
import { createJfast, type CreateJfastOptions, type Jfast } from "../create-jfast.js";
import { JfastError } from "../errors/jfast-error.js";
import { createTaskExecutor } from "../worker/execute-task.js";
import { createLogger } from "../observability/logger.js";

/**
 * A service for tests (docs/testing.md): the app built from its own jfast.toml (or a minimal one) with an
 * in-process memory queue, and the helpers Oban.Testing and River's rivertest give — jobs kept until `drain()`
 * (manual mode) or run as they are enqueued (inline mode), `enqueued` / `assertEnqueued` to check what the code
 * under test enqueued, and `perform` to run one handler directly.
 */
export interface TestJfastOptions extends Omit<CreateJfastOptions, "root" | "backend"> {
  /**
   * The service's root (its jfast.toml; its queue is replaced by the memory queue). Absent: a minimal service with
   * the queue plugin only, `tasks` its tasks. Without `logger`, nothing is logged.
   */
  root?: string;
  /**
   * "manual" (default): enqueued jobs wait until `drain()`. "inline": each enqueue (after its transaction commits,
   * for the outbox) runs the jobs it made, and the jobs they enqueue, before it returns.
   */
  mode?: "manual" | "inline";
}

/** One attempt `drain` or an inline enqueue ran. */
export interface RanJob {
  id: string;
  task: string;
  payload: unknown;
  attempt: number;
  /** completed; retry (it failed and will run again once its backoff is over); dead. */
  outcome: "completed" | "retry" | "dead";
  /** What the handler returned, when it completed. */
  result?: unknown;
  /** Why it failed, when it did. */
  error?: { class: string; message: string };
}

export interface EnqueuedQuery {
  task: string | Pick<TaskDefinition, "name">;
  /** Matches when every key given is equal in the job's payload (deep, for nested objects); other keys are free. */
  payload?: Record<string, unknown>;
  /** Only jobs of this tenant. */
  tenantId?: string | null;
}

export interface TestJfast {
  readonly jfast: Jfast;
  readonly backend: MemoryBackend;
  /**
   * Runs every due job, and the jobs those enqueue, until none is due; returns each attempt, in the order they
   * ended. Jobs scheduled for later (a delay, a retry's backoff) are left waiting. `task` runs only that task's jobs.
   */
  drain(options?: { task?: string | Pick<TaskDefinition, "name">; queue?: string }): Promise<RanJob[]>;
  /** Jobs waiting to run (ready or scheduled) that match `query`, oldest first. */
  enqueued(query: EnqueuedQuery): Promise<Job[]>;
  /** Throws, listing what is waiting instead, unless a waiting job matches (exactly `count` of them, if given). */
  assertEnqueued(query: EnqueuedQuery & { count?: number }): Promise<void>;
  /** Throws when a waiting job matches. */
  refuteEnqueued(query: EnqueuedQuery): Promise<void>;
  /**
   * Runs `task`'s handler once with `payload`, as a worker would run an attempt (its session and inbox claim, the
   * service's middleware, the payload's schema), without the queue. Resolves to what it returned.
   */
  perform<P, R, In>(task: Task<P, R, In>, payload: In, options?: { tenantId?: string | null }): Promise<R>;
  perform<P>(task: TaskDefinition<P>, payload: P, options?: { tenantId?: string | null }): Promise<unknown>;
  stop(): Promise<void>;
}

const DRAIN_WORKER = "test-drain";

export async function createTestJfast(options: TestJfastOptions = {}): Promise<TestJfast> {
  const { mode = "manual", root: givenRoot, ...rest } = options;
  let root = givenRoot;
  let tempRoot: string | null = null;
  if (root === undefined) {
    tempRoot = await mkdtemp(path.join(tmpdir(), "jfast-test-"));
    await writeFile(path.join(tempRoot, "jfast.toml"), `[service]\nname = "test"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    root = tempRoot;
  }
  const memory = createMemoryBackend();
  let draining: Promise<RanJob[]> | null = null;
  let inline = mode === "inline";
  // Inline mode: an enqueue runs what it made before it returns (the relay's delivery, for the outbox, comes after
  // the commit). Not while a drain is running: its loop picks the new jobs up.
  const backend = new Proxy(memory, {
    get(target, property, receiver) {
      if (property === "enqueue") {
        return async (params: { jobs: Job[] }) => {
          const result = await target.enqueue(params);
          if (inline && !draining) await drain();
          return result;
        };
      }
      if (property === "enqueueFlow") {
        return async (params: { flow: FlowPlan }) => {
          const result = await target.enqueueFlow(params);
          if (inline && !draining) await drain();
          return result;
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  // Quiet unless the test gives a logger: a job a test makes fail on purpose logs no error line.
  const logger = createLogger({ service: "test", level: "silent" });
  const jfast = await createJfast({ logger, ...rest, root, backend, background: false });
  await jfast.start();
  const execute = createTaskExecutor({
    context: jfast.context,
    database: () => {
      try {
        return jfast.require("database");
      } catch {
        return null;
      }
    },
    logger,
    ...(options.middleware ? { middleware: options.middleware } : {}),
  });

  async function drain(params: { task?: string | Pick<TaskDefinition, "name">; queue?: string } = {}): Promise<RanJob[]> {
    if (draining) return draining;
    const only = params.task === undefined ? null : typeof params.task === "string" ? params.task : params.task.name;
    draining = (async () => {
      const ran: RanJob[] = [];
      const off = [
        jfast.on("job:completed", ({ job, value }) => void ran.push({ ...ranOf(job), outcome: "completed", ...(value === undefined ? {} : { result: value }) })),
        jfast.on("job:failed", ({ job, attemptError, retryAt }) => {
          if (retryAt) ran.push({ ...ranOf(job), outcome: "retry", error: { class: attemptError.class, message: attemptError.message } });
        }),
        jfast.on("job:dead", ({ job, attemptError }) => void ran.push({ ...ranOf(job), outcome: "dead", error: { class: attemptError.class, message: attemptError.message } })),
      ];
      const worker = jfast.createWorker({ concurrency: 1, workerId: DRAIN_WORKER, ...(params.queue ? { queues: [params.queue] } : {}) });
      if (only) await pauseAllBut(only);
      worker.start();
      try {
        // Done when nothing is due or running: what is left waits for a later time (a delay, a backoff).
        for (;;) {
          await new Promise((r) => setTimeout(r, 5));
          const depths = await memory.depths();
          if (depths.running === 0 && depths.ready === 0) break;
          if (only && !(await dueOf(only)) && depths.running === 0) break;
        }
      } finally {
        await worker.stop({ graceMs: 0 });
        off.forEach((unsubscribe) => unsubscribe());
        if (only) await resumeAll();
      }
      return ran;
    })().finally(() => {
      draining = null;
    });
    return draining;
  }

  const paused: string[] = [];
  async function pauseAllBut(task: string): Promise<void> {
    const pauses = jfast.require("queue").pauses;
    if (!pauses) return;
    for (const name of jfast.tasks.names()) {
      if (name === task) continue;
      await pauses.pause({ task: name, by: "test" });
      paused.push(name);
    }
  }
  async function resumeAll(): Promise<void> {
    const pauses = jfast.require("queue").pauses;
    for (const name of paused.splice(0)) await pauses?.resume({ task: name });
  }
  async function dueOf(task: string): Promise<boolean> {
    const { rows } = await memory.listJobs({ state: "ready", order: "oldest", task, limit: 1 });
    return rows.length > 0;
  }

  async function waiting(query: EnqueuedQuery): Promise<Job[]> {
    const task = typeof query.task === "string" ? query.task : query.task.name;
    const infos: JobInfo[] = [];
    for (const state of ["ready", "scheduled"] as const) {
      let after: string | undefined;
      do {
        const page = await memory.listJobs({ state, order: "oldest", task, limit: 1000, ...(after ? { after } : {}) });
        infos.push(...page.rows);
        after = page.next ?? undefined;
      } while (after);
    }
    return infos
      .filter((info) => (query.tenantId === undefined || info.job.tenantId === query.tenantId) && (query.payload === undefined || matches(info.job.payload, query.payload)))
      .map((info) => Job.fromJSON(info.job));
  }

  return {
    jfast,
    backend: memory,
    drain,
    enqueued: waiting,
    async assertEnqueued(query) {
      const found = await waiting(query);
      if (query.count === undefined ? found.length > 0 : found.length === query.count) return;
      const task = typeof query.task === "string" ? query.task : query.task.name;
      const all = await waiting({ task });
      throw new JfastError(
        `expected ${query.count === undefined ? "a waiting job" : `${query.count} waiting job(s)`} of "${task}"${query.payload ? ` with payload matching ${JSON.stringify(query.payload)}` : ""}, found ${found.length}; waiting "${task}" jobs: ${all.length === 0 ? "none" : all.map((j) => JSON.stringify(j.payload)).join(", ")}`,
        { code: "TEST_ASSERTION", docs: "jfast docs testing#checking-what-was-enqueued" },
      );
    },
    async refuteEnqueued(query) {
      const found = await waiting(query);
      if (found.length === 0) return;
      const task = typeof query.task === "string" ? query.task : query.task.name;
      throw new JfastError(`expected no waiting job of "${task}" matching ${JSON.stringify(query.payload ?? {})}, found ${found.length}: ${found.map((j) => JSON.stringify(j.payload)).join(", ")}`, {
        code: "TEST_ASSERTION",
        docs: "jfast docs testing#checking-what-was-enqueued",
      });
    },
    async perform(task: TaskDefinition, payload: unknown, performOptions: { tenantId?: string | null } = {}): Promise<never> {
      const definition = jfast.tasks.get(task.name) ?? (task as TaskDefinition);
      const job = new Job({ task: definition.name, payload, ...(performOptions.tenantId !== undefined ? { tenantId: performOptions.tenantId } : {}) });
      job.attempts = 1;
      const controller = new AbortController();
      return (await jfast.withRequest({ tenantId: job.tenantId, requestId: null }, () => execute(definition, job, { signal: controller.signal }))) as never;
    },
    async stop() {
      inline = false;
      await jfast.stop();
      if (tempRoot) await rm(tempRoot, { recursive: true, force: true });
    },
  };
}

function ranOf(job: Job): Omit<RanJob, "outcome"> {
  return { id: job.id, task: job.task, payload: job.payload, attempt: job.attempts };
}

/** Every key of `expected` equal in `actual`, objects compared the same way down, arrays and values by JSON. */
function matches(actual: unknown, expected: unknown): boolean {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([key, value]) => matches((actual as Record<string, unknown>)[key], value));
  }
  return JSON.stringify(actual) === JSON.stringify(expected);
}
