/** pg-boss in batch mode: each work() loop fetches a batch and completes it in one statement. */
import { randomBytes } from "node:crypto";
import pg from "pg";
import PgBoss from "pg-boss";
import { probe, services, timePickup, waitDone, type Subject } from "../lib/subject.js";
import { packageVersion } from "./package-version.js";

const version = packageVersion("pg-boss");
const QUEUE = "noop";
const BATCH = 100;
const CHUNK = 5000;

export function pgBossSubject(): Subject {
  const schema = `pgboss_bench_${randomBytes(4).toString("hex")}`;
  let boss: PgBoss;
  let workIds: string[] = [];
  const handler = async (jobs: PgBoss.Job[]) => {
    for (const _ of jobs) probe.hit();
  };
  // pg-boss 10 has no concurrency option: concurrency is the number of work() loops in the process.
  const startWork = async (concurrency: number, batchSize: number) => {
    for (let i = 0; i < concurrency; i++) {
      workIds.push(await boss.work(QUEUE, { batchSize, pollingIntervalSeconds: 0.5 }, handler));
    }
  };
  const stopWork = async () => {
    for (const id of workIds) await boss.offWork({ id } as never);
    workIds = [];
  };
  return {
    label: `pg-boss ${version}`,
    settings: `batchSize ${BATCH} per work() loop, one loop per unit of concurrency, pollingIntervalSeconds 0.5 (its minimum; pg-boss 10 polls, no LISTEN/NOTIFY)`,
    async setup() {
      boss = new PgBoss({ connectionString: services.postgres, schema, max: 12, supervise: false, schedule: false });
      boss.on("error", console.error);
      await boss.start();
      await boss.createQueue(QUEUE);
    },
    async enqueue(count) {
      for (let i = 0; i < count; i += CHUNK) {
        await boss.insert(Array.from({ length: Math.min(CHUNK, count - i) }, () => ({ name: QUEUE, data: {} })));
      }
    },
    async drain(count, concurrency) {
      const target = probe.done + count;
      await startWork(concurrency, BATCH);
      await waitDone(target);
      await stopWork();
    },
    startIdle: () => startWork(1, BATCH),
    pickupOne: () => timePickup(() => boss.send(QUEUE, {})),
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
      const admin = new pg.Client({ connectionString: services.postgres });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
