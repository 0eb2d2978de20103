/**
 * pg-boss 12 at its documented best for throughput and latency: batch handlers (a batch fetched and completed in
 * one statement each), `localConcurrency` workers per work() call, burst fetching while batches come back full,
 * and LISTEN/NOTIFY wake-ups (`useListenNotify` on the instance, `notify` on the queue) instead of polling.
 */
import pg from "pg";
import { PgBoss, type Job as PgBossJob } from "pg-boss";
import { pgSynchronousCommit } from "../lib/server-settings.js";
import { probe, services, singleProcess, waitDone, type Subject, type SubjectContext } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("pg-boss");
const QUEUE = "noop";
const BATCH = 100;
const CHUNK = 5000;

export function pgBossSubject(context: SubjectContext = singleProcess()): Subject {
  const schema = `pgboss_bench_${context.namespace}`;
  let boss: PgBoss;
  let workIds: string[] = [];
  let synchronousCommit = "";
  const handler = async (jobs: PgBossJob[]) => {
    for (const _ of jobs) probe.hit();
  };
  // Concurrency is `localConcurrency`: that many workers, each fetching and completing a batch at a time.
  const startWork = async (concurrency: number, batchSize: number) => {
    workIds.push(await boss.work(QUEUE, { batchSize, localConcurrency: concurrency, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 }, handler));
  };
  const stopWork = async () => {
    for (const id of workIds) await boss.offWork(QUEUE, { id, wait: true });
    workIds = [];
  };
  return {
    label: `pg-boss ${version}`,
    get settings() {
      return `batchSize ${BATCH}, localConcurrency = the concurrency, burstWhenBatchFull, useListenNotify with a notify queue (polling 0.5 s as the floor), max 12 connections, every commit under the server's synchronous_commit (${synchronousCommit})`;
    },
    async setup() {
      synchronousCommit = await pgSynchronousCommit(services.postgres);
      boss = new PgBoss({ connectionString: services.postgres, schema, max: 12, supervise: false, schedule: false, useListenNotify: true });
      boss.on("error", console.error);
      await boss.start();
      await boss.createQueue(QUEUE, { notify: true });
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await boss.insert(QUEUE, Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ data: {} })));
      }
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      await startWork(concurrency, BATCH);
      await waitDone(target);
      await stopWork();
    },
    startIdle: () => startWork(1, BATCH),
    enqueueOne: () => boss.send(QUEUE, {}),
    stopIdle: stopWork,
    async fillDead(count) {
      await this.enqueue(count);
      const client = new pg.Client({ connectionString: services.postgres });
      await client.connect();
      try {
        await client.query(`UPDATE ${schema}.job SET state = 'failed', completed_on = now() WHERE state = 'created'`);
        await client.query(`ANALYZE ${schema}.job`);
      } finally {
        await client.end();
      }
    },
    async teardown() {
      await boss?.stop({ graceful: false, wait: true } as never);
      if (context.role === "worker") return;
      const admin = new pg.Client({ connectionString: services.postgres });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
