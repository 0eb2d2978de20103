/** graphile-worker with its documented throughput options: a local queue and batched completions. */
import pg from "pg";
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from "graphile-worker";
import { pgSynchronousCommit } from "../lib/server-settings.js";
import { probe, services, singleProcess, waitDone, type Subject, type SubjectContext } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("graphile-worker");
const CHUNK = 5000;

export function graphileSubject(context: SubjectContext = singleProcess()): Subject {
  const schema = `gw_bench_${context.namespace}`;
  let utils: WorkerUtils;
  let idle: Runner | null = null;
  let synchronousCommit = "";
  const start = (concurrency: number) =>
    run({
      connectionString: services.postgres,
      concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      logger: quietLogger,
      taskList: { noop: async () => probe.hit() },
      preset: {
        worker: {
          schema,
          localQueue: { size: 500 },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
          maxPoolSize: 12,
        },
      },
    });
  return {
    label: `graphile-worker ${version}`,
    get settings() {
      return `localQueue.size 500, completeJobBatchDelay 0 (batched completions), LISTEN/NOTIFY, maxPoolSize 12, every commit under the server's synchronous_commit (${synchronousCommit})`;
    },
    async setup() {
      synchronousCommit = await pgSynchronousCommit(services.postgres);
      utils = await makeWorkerUtils({ connectionString: services.postgres, schema });
      await utils.migrate();
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await utils.addJobs(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ identifier: "noop", payload: {} })));
      }
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      const runner = await start(concurrency);
      await waitDone(target);
      await runner.stop();
    },
    async startIdle() {
      idle = await start(10);
    },
    enqueueOne: () => utils.addJob("noop", {}),
    async stopIdle() {
      await idle?.stop();
      idle = null;
    },
    async fillDead(count) {
      // Permanently failed jobs stay in the jobs table (attempts = max_attempts); that is graphile-worker's "dead".
      const client = new pg.Client({ connectionString: services.postgres });
      await client.connect();
      try {
        for (let i = 0; i < count; i += CHUNK) {
          await utils.addJobs(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ identifier: "noop", payload: {} })));
        }
        await client.query(`UPDATE ${schema}._private_jobs SET attempts = max_attempts, last_error = 'x' WHERE locked_at IS NULL`);
        await client.query(`ANALYZE ${schema}._private_jobs`);
      } finally {
        await client.end();
      }
    },
    async teardown() {
      await utils?.release();
      if (context.role === "worker") return;
      const admin = new pg.Client({ connectionString: services.postgres });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const quietLogger = new Logger(() => (level, message) => {
  if (level === "error") console.error(message);
});
