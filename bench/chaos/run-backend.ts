/** One backend's chaos run: faults while the jobs drain, then the checks, then malformed input and a too-large payload. */
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import pg from "pg";
import { createJfast, Job, type Jfast, type QueueProvider } from "@jfast/runtime";
import { dropJfastAmqpQueue, dropRedisKeys } from "../lib/cleanup.js";
import { services, sleep } from "../lib/subject.js";
import { restartRabbitMq, restartRedis } from "./brokers.js";
import { killRabbitMqNode, rabbitmqClusterFirstUrl } from "./rabbitmq-cluster.js";
import { startPrivatePostgres, type PrivatePostgres } from "./private-postgres.js";
import { injectMalformed } from "./inject.js";
import type { BackendOutcome, FaultOutcome } from "./reliability.js";
import { createServiceRoot, MAX_PAYLOAD_BYTES, POLL_INTERVAL_S, VISIBILITY_TIMEOUT_S, type ChaosBackend } from "./service.js";
import { WorkerProcess } from "./workers.js";

/** How long the backlog may take to drain: CHAOS_TIMEOUT_MS, else 90 s or 60 ms per job, whichever is longer. */
const drainTimeoutMs = (jobs: number) => Number(process.env.CHAOS_TIMEOUT_MS ?? Math.max(90_000, jobs * 60));
const random = (min: number, max: number) => min + Math.random() * (max - min);

export async function runBackend(params: { backend: ChaosBackend; jobs: number; kills: number }): Promise<BackendOutcome> {
  const { backend, jobs, kills } = params;
  const DRAIN_TIMEOUT_MS = drainTimeoutMs(jobs);
  const id = randomBytes(4).toString("hex");
  const schema = `jfast_chaos_${id}`;
  const queueName = `chaos.${id}`;
  // The PostgreSQL backend gets a server of its own, so that its broker restart restarts a real server
  // without cutting the one every other suite shares. The others record their effects in the shared one.
  const privatePg: PrivatePostgres | null = backend === "postgres" ? await startPrivatePostgres() : null;
  const postgresUrl = privatePg?.url ?? services.postgres;
  const root = await createServiceRoot({ backend, schema, queue: queueName, postgresUrl });
  // A pool, not one client: the connection does not survive the server's restart, the pool replaces it.
  const db = new pg.Pool({ connectionString: postgresUrl, max: 2 });
  db.on("error", () => undefined);
  const problems: string[] = [];
  const faults: FaultOutcome[] = [];
  let jfast: Jfast | null = null;
  const workers = [new WorkerProcess(root, "worker A"), new WorkerProcess(root, "worker B")];
  // Both workers crashed on their own: nothing will drain, stop waiting (the crash is reported).
  const hopeless = () => workers.every((w) => !w.alive && w.crashes.length > 0);
  const effects = async () => {
    // While the server restarts, the count waits for it (up to a minute) rather than failing the run.
    for (let waited = 0; ; waited += 100) {
      try {
        const { rows } = await db.query(`SELECT count(*)::int AS total, count(DISTINCT n)::int AS distinct FROM ${schema}.chaos_effects WHERE n >= 0`);
        return rows[0] as { total: number; distinct: number };
      } catch (error) {
        if (waited >= 60_000) throw error;
        await sleep(100);
      }
    }
  };
  /** ms from `since` until the effect count grows past `base` (work resumed); Infinity if not within the limit; null if nothing was left. */
  const resumedAfter = async (base: number, since: number, limitMs = 60_000): Promise<number | null> => {
    while (Date.now() - since < limitMs && !hopeless()) {
      const { distinct } = await effects();
      if (distinct > base) return Date.now() - since;
      if (distinct >= jobs) return null;
      await sleep(25);
    }
    return (await effects()).distinct >= jobs ? null : Infinity;
  };
  try {
    // The parent is a service instance without a worker: it migrates, enqueues and inspects.
    jfast = await createJfast({ root, env: {} });
    await jfast.start();
    await db.query(`CREATE TABLE ${schema}.chaos_effects (n integer NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
    const queue = jfast.require<QueueProvider>("queue");
    for (let i = 0; i < jobs; i += 500) {
      await queue.enqueue(Array.from({ length: Math.min(500, jobs - i) }, (_, k) => new Job({ task: "chaos.effect", payload: { n: i + k } })));
    }
    for (const w of workers) w.start();
    const t0 = Date.now();

    // Kills of worker A at random moments while the backlog drains; the broker restart near the middle.
    const restartAt = Math.max(1, Math.floor(kills / 2));
    const killTimes: number[] = [];
    for (let k = 0; k < kills; k++) {
      const target = ((k + 1) / (kills + 2)) * jobs;
      while ((await effects()).distinct < target && Date.now() - t0 < DRAIN_TIMEOUT_MS && !hopeless()) await sleep(random(10, 60));
      await sleep(random(0, 150));
      const victim = workers[k % 2 === 0 ? 0 : 1]!;
      const other = workers[k % 2 === 0 ? 1 : 0]!;
      const before = (await effects()).distinct;
      const at = Date.now();
      const otherAge = (at - other.startedAt) / 1000;
      victim.kill9();
      killTimes.push(at);
      await sleep(random(100, 600));
      victim.start();
      const recovery = await resumedAfter(before, at);
      faults.push({ fault: "kill -9 worker", detail: `${victim.name} at ${before}/${jobs} effects; the other worker started ${otherAge.toFixed(1)} s before`, recoveryMs: recovery });
      if (k + 1 === restartAt) await restartBroker({ backend, privatePg, workers, faults, effects, resumedAfter, jobs });
    }
    if (kills === 0) await restartBroker({ backend, privatePg, workers, faults, effects, resumedAfter, jobs });

    // Drain: every job's effect, or the timeout.
    while ((await effects()).distinct < jobs && Date.now() - t0 < DRAIN_TIMEOUT_MS && !hopeless()) await sleep(100);
    const drainedMs = Date.now() - t0;
    const { total, distinct } = await effects();
    // Give stragglers (a redelivery racing the last commit) a moment to show a duplicate, if there is one.
    await sleep(1500);
    const after = await effects();
    // A job whose effect committed but whose completion did not reach the broker (it was restarting) is still
    // leased: it runs again once the lease expires, the inbox skips the effect, and the completion settles it.
    // Stuck means still queued or running after that: two leases and poll intervals past the last effect.
    const settleLimitMs = 2 * (VISIBILITY_TIMEOUT_S + POLL_INTERVAL_S) * 1000;
    let depths = await queue.depths();
    while (depths.ready + depths.scheduled + depths.running > 0 && Date.now() - t0 - drainedMs < settleLimitMs && !hopeless()) {
      await sleep(200);
      depths = await queue.depths();
    }
    const settledMs = Date.now() - t0;
    const lost = jobs - after.distinct;
    const duplicated = after.total - after.distinct;
    const stuck = depths.ready + depths.scheduled + depths.running;
    if (lost > 0) problems.push(`${lost} jobs never recorded their effect within ${DRAIN_TIMEOUT_MS} ms`);
    if (duplicated > 0) problems.push(`${duplicated} effects recorded more than once`);
    if (stuck > 0) problems.push(`${stuck} jobs still queued or running ${(settleLimitMs / 1000).toFixed(0)} s after the drain: ${JSON.stringify(depths)}`);
    if (depths.dead > 0) problems.push(`${depths.dead} unexpected dead letters: ${JSON.stringify((await queue.backend.listDead({ limit: 3 })).map((d) => d.lastError))}`);
    void total;
    void distinct;

    // Malformed input, straight into the backend, plus a valid job for a task nobody declared (also straight
    // in: queue.enqueue refuses a task this service does not declare).
    const injected = await injectMalformed(backend, queueName);
    await queue.backend.enqueue({ jobs: [new Job({ task: "chaos.no_such_task", payload: {}, maxAttempts: 3 })] });
    injected.push({ kind: "unknown task", id: null });
    // A real job after the garbage: the workers must still be working.
    await queue.enqueue(new Job({ task: "chaos.effect", payload: { n: jobs } }));
    const malformedT0 = Date.now();
    let dead = await queue.backend.listDead({ limit: 50 });
    while ((dead.length < injected.length || (await effects()).distinct < jobs + 1) && Date.now() - malformedT0 < 30_000 && !hopeless()) {
      await sleep(100);
      dead = await queue.backend.listDead({ limit: 50 });
    }
    const reasons = dead.map((d) => d.lastError?.reason ?? d.lastError?.message ?? "(no reason)");
    if (dead.length !== injected.length) problems.push(`${injected.length} malformed messages injected, ${dead.length} dead letters`);
    if (dead.some((d) => !d.lastError?.reason && !d.lastError?.message)) problems.push("a dead letter carries no reason");
    if ((await effects()).distinct < jobs + 1) problems.push("a real job enqueued after the malformed ones did not run");
    for (const w of workers) if (!w.alive) problems.push(`${w.name} is not running after the malformed messages`);
    faults.push({
      fault: "malformed messages",
      detail: `${injected.map((i) => i.kind).join("; ")} → dead-lettered with: ${[...new Set(reasons)].join("; ")}`,
      recoveryMs: null,
    });

    // A payload over the configured limit is refused at enqueue, before the backend sees it.
    const refused = await queue
      .enqueue(new Job({ task: "chaos.effect", payload: { n: -2, blob: "x".repeat(MAX_PAYLOAD_BYTES) } }))
      .then(() => null, (error: unknown) => error as { code?: string; message: string });
    if (refused?.code !== "PAYLOAD_TOO_LARGE") problems.push(`an oversized payload was not refused with PAYLOAD_TOO_LARGE (${refused?.message ?? "accepted"})`);
    faults.push({ fault: "payload over max_payload_bytes", detail: refused ? `refused: ${refused.code}` : "ACCEPTED", recoveryMs: null });

    for (const w of workers) problems.push(...w.crashes);
    return { backend, faults, lost, duplicated, stuck, unexpectedDead: depths.dead, drainedMs, settledMs, problems };
  } catch (error) {
    problems.push(`the run itself failed: ${(error as Error).stack ?? error}`);
    return { backend, faults, lost: NaN, duplicated: NaN, stuck: NaN, unexpectedDead: NaN, drainedMs: NaN, settledMs: NaN, problems };
  } finally {
    for (const w of workers) await w.stop().catch(() => undefined);
    await jfast?.stop().catch(() => undefined);
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.end().catch(() => undefined);
    await privatePg?.destroy();
    if (backend === "redis") await dropRedisKeys(`*{${queueName}}*`).catch(() => undefined);
    if (backend === "rabbitmq") await dropJfastAmqpQueue(queueName).catch(() => undefined);
    if (backend === "rabbitmq-cluster") await dropJfastAmqpQueue(queueName, undefined, rabbitmqClusterFirstUrl()).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

const BROKER_RESTART: Record<ChaosBackend, string> = {
  postgres: "PostgreSQL server stopped in immediate mode (crash recovery at start) + started",
  redis: "redis-server SHUTDOWN SAVE + start",
  rabbitmq: "rabbitmqctl stop_app + start_app",
  "rabbitmq-cluster": "kill -9 of the node every process is connected to (and the queues' leader) + started again",
};

async function restartBroker(params: {
  backend: ChaosBackend;
  privatePg: PrivatePostgres | null;
  workers: WorkerProcess[];
  faults: FaultOutcome[];
  effects: () => Promise<{ distinct: number }>;
  resumedAfter: (base: number, since: number) => Promise<number | null>;
  jobs: number;
}): Promise<void> {
  const { backend, privatePg, workers, faults, effects, resumedAfter, jobs } = params;
  const refusalsBefore = workers.map((w) => w.startRefusals.length);
  const before = (await effects()).distinct;
  const at = Date.now();
  if (backend === "redis") await restartRedis(500);
  else if (backend === "rabbitmq") await restartRabbitMq(500);
  else if (backend === "rabbitmq-cluster") await killRabbitMqNode(500);
  else await privatePg!.restart(500);
  const upAt = Date.now();
  // Counted from the broker being back: effects committed meanwhile were jobs already in hand.
  const resumed = await resumedAfter((await effects()).distinct, upAt);
  // A worker that was starting when the broker went down refuses to start; its supervisor starts it again.
  const refused = workers.filter((w, i) => w.startRefusals.length > refusalsBefore[i]!).map((w) => w.name);
  faults.push({
    fault: "broker restart",
    detail:
      `${BROKER_RESTART[backend]} at ${before}/${jobs} effects, down ${((upAt - at) / 1000).toFixed(1)} s` +
      (refused.length > 0 ? `; ${refused.join(" and ")}, starting at that moment, refused to start (broker unreachable) and was started again` : ""),
    recoveryMs: resumed,
  });
}
