import path from "node:path";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { Redis, type Cluster } from "ioredis";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { makeJob, sleep } from "../conformance/harness.js";
import { startWorkerProcess, type WorkerProcess } from "./process-harness.js";
import { clusterStateDir, redisCluster, startClusterNode } from "./redis-cluster-env.js";
import { dropQueue, openBackend, rawClient, REDIS_URL, uniqueQueue } from "./redis-test-env.js";

const target = redisCluster();
const effects = rawClient();

function node(port: number): Redis {
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on("error", () => undefined);
  return client;
}

async function role(port: number): Promise<string> {
  const client = node(port);
  try {
    await client.connect();
    const [name, , , state] = (await client.role()) as [string, string, number, string];
    // A replica counts once its link to the primary is up and the initial sync is done.
    return name === "slave" ? (state === "connected" ? "replica" : "syncing") : name;
  } catch {
    return "down";
  } finally {
    client.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** The primary serving the queue's slot and its replica (ports), from CLUSTER SLOTS. */
async function shardOf(queue: string): Promise<{ primary: number; replica: number }> {
  const client = rawClient(target) as Cluster;
  try {
    await client.connect();
    const slot = Number(await client.cluster("KEYSLOT", `{${queue}}`));
    // A node restarted by an earlier case (or a cluster just started on a busy machine) takes a moment to be
    // listed as the replica again: wait for the shard to have one.
    for (const until = Date.now() + 60_000; ; ) {
      const ranges = await client.cluster("SLOTS");
      const [, , owner, follower] = ranges.find(([from, to]) => slot >= from && slot <= to) ?? [];
      if (owner && follower) return { primary: Number(owner[1]), replica: Number(follower[1]) };
      if (Date.now() > until) throw new Error(`the shard of slot ${slot} has no replica listed: ${JSON.stringify(ranges)}`);
      await sleep(250);
    }
  } finally {
    client.disconnect();
  }
}

interface Outcome {
  waitReplicas: number;
  replicaLagMs: number;
  acknowledged: number;
  lost: number;
  duplicated: number;
  enqueueErrors: number;
  /** Longest time the producer went without an acknowledged enqueue, around the kill (ms). */
  enqueueOutageMs: number;
  /** From the kill until the replica answered as primary (ms). */
  promotedAfterMs: number;
  /** From the kill until the queue was empty again (ms). */
  drainedAfterMs: number;
}

/**
 * A producer enqueues while two worker processes drain the queue; the primary serving the queue's slot gets
 * SIGKILL mid-drain; its replica is promoted; once it is, the killed node is started again (it rejoins as a
 * replica). Every acknowledged enqueue must run; what is lost and what runs twice is counted.
 * `replicaLagMs`: that long before the kill the primary's replication link is cut and the replica kept from
 * reconnecting (the primary starts asking for a password the replica does not have; connections already open
 * stay in), the way a replica behind a broken or slow link holds less than its primary acknowledged.
 */
async function killPrimaryMidDrain(params: { waitReplicas: number; replicaLagMs: number }): Promise<Outcome> {
  const { waitReplicas, replicaLagMs } = params;
  const queue = uniqueQueue(`failover-${waitReplicas}`);
  const effectsKey = `${queue}:effects`;
  const { primary, replica } = await shardOf(queue);
  const processes: WorkerProcess[] = [];
  let producer: RedisBackend | null = null;
  let killedAt = 0;
  let linkCut = false;
  const pidOf = (port: number) => Number(readFileSync(path.join(clusterStateDir(), String(port), "redis.pid"), "utf8").trim());
  try {
    // Heartbeats outlive the failover (a TTL shorter than it returns live workers' jobs: duplicates of our making).
    producer = await openBackend(queue, { workerTtlMs: 10_000, waitReplicas }, target);
    const settings = { mode: "work", url: target.url, cluster: true, queue, workerTtlMs: 10_000, leaseMs: 20_000, concurrency: 1, effectsKey, effectsUrl: REDIS_URL, waitReplicas };
    for (let i = 0; i < 2; i++) processes.push(startWorkerProcess({ ...settings, workerId: `failover-${i}-${randomUUID().slice(0, 6)}` }));
    await Promise.all(processes.map((p) => p.first));

    const acknowledged: string[] = [];
    let enqueueErrors = 0;
    let lastAck = Date.now();
    let outage = 0;
    let promotedAt = 0;
    let restarted = false;
    let cutAt = 0;
    // Batches of 10 every 10 ms, faster than the workers drain, so a backlog waits when the kill comes (at batch
    // 40, or replicaLagMs after the link was cut there): the kill is tied to the batches, not to the clock, so a
    // fast machine cannot finish every batch before it. A failed batch is sent again (same ids: enqueue is
    // idempotent), as a caller such as the outbox relay does.
    for (let batch = 0; batch < 100; batch++) {
      const jobs = Array.from({ length: 10 }, (_, i) => makeJob({ task: "crash.effect", payload: { batch, i }, maxAttempts: 10 }));
      for (;;) {
        if (replicaLagMs > 0 && !linkCut && batch >= 40) {
          linkCut = true;
          cutAt = Date.now();
          const admin = node(primary);
          await admin.connect();
          await admin.config("SET", "requirepass", randomUUID());
          // ioredis 6 types CLIENT subcommands one by one; KILL TYPE goes through call().
          await admin.call("CLIENT", "KILL", "TYPE", "replica");
          admin.disconnect();
        }
        if (!killedAt && batch >= 40 && (replicaLagMs === 0 || (cutAt > 0 && Date.now() - cutAt >= replicaLagMs))) {
          killedAt = Date.now();
          process.kill(pidOf(primary), "SIGKILL");
        }
        if (killedAt && !promotedAt && (await role(replica)) === "master") promotedAt = Date.now();
        if (promotedAt && !restarted) {
          startClusterNode(primary);
          restarted = true;
        }
        try {
          await producer.enqueue({ jobs });
          const now = Date.now();
          outage = Math.max(outage, now - lastAck);
          lastAck = now;
          acknowledged.push(...jobs.map((j) => j.id));
          break;
        } catch {
          enqueueErrors++;
          await sleep(100);
        }
      }
      await sleep(10);
    }
    // Fewer than replicaLagMs' worth of batches after the cut: the kill comes now.
    if (!killedAt) {
      if (replicaLagMs > 0) await sleep(Math.max(0, replicaLagMs - (Date.now() - cutAt)));
      killedAt = Date.now();
      process.kill(pidOf(primary), "SIGKILL");
    }
    if (!promotedAt) {
      await until("the replica to be promoted", async () => (await role(replica)) === "master", 30_000).catch(async (error: Error) => {
        // What the replica knows of the cluster says why it did not take over (no majority, data too old, ...).
        const client = node(replica);
        const nodes = await client.connect().then(() => client.cluster("NODES")).catch((e: Error) => e.message);
        client.disconnect();
        throw new Error(`${error.message}; the replica (${replica}) sees:\n${String(nodes)}`);
      });
      promotedAt = Date.now();
    }
    if (!restarted) startClusterNode(primary);

    // The killed node, started again, holds no data and may answer for its old slots for a moment before it learns
    // of the failover: an empty queue read from it would end the wait below early. Read once it is a replica.
    await until("the killed node to rejoin as a replica", async () => (await role(primary)) === "replica", 60_000);
    const deadline = Date.now() + 60_000;
    let ran: Record<string, string> = {};
    let emptySince = 0;
    while (Date.now() < deadline) {
      ran = await effects.hgetall(effectsKey);
      if (acknowledged.every((id) => ran[id])) break;
      const depths = await producer.depths();
      // An empty queue, read so for 2 s, is the end: an acknowledged job the new primary never had will not run.
      if (depths.ready + depths.scheduled + depths.running > 0) emptySince = 0;
      else if (emptySince === 0) emptySince = Date.now();
      else if (Date.now() - emptySince >= 2_000) break;
      await sleep(100);
    }
    const drainedAt = Date.now();
    return {
      waitReplicas,
      replicaLagMs,
      acknowledged: acknowledged.length,
      lost: acknowledged.filter((id) => !ran[id]).length,
      duplicated: Object.values(ran).filter((n) => Number(n) > 1).length,
      enqueueErrors,
      enqueueOutageMs: outage,
      promotedAfterMs: promotedAt - killedAt,
      drainedAfterMs: drainedAt - killedAt,
    };
  } finally {
    await Promise.all(processes.map((p) => p.kill()));
    await producer?.close().catch(() => undefined);
    // Whatever happened, the killed node runs again and the cluster is whole before the next test.
    if ((await role(primary)) === "down") startClusterNode(primary);
    await until("the killed node to rejoin as a replica", async () => (await role(primary)) === "replica" || (await role(replica)) === "replica", 60_000);
    redisCluster();
    await dropQueue(queue, undefined, target);
    await effects.del(effectsKey);
  }
}

describe("redis cluster: a primary killed with -9 mid-drain, its replica promoted", () => {
  afterAll(() => effects.disconnect());

  it("without wait_replicas, replica up to date: fails over and drains; acknowledged writes the replica lacked are counted", async () => {
    const outcome = await killPrimaryMidDrain({ waitReplicas: 0, replicaLagMs: 0 });
    console.log(JSON.stringify({ failover: outcome }));
    expect(outcome.acknowledged).toBe(1000);
    expect(outcome.promotedAfterMs).toBeLessThan(15_000);
    // Asynchronous replication: what the primary acknowledged in the instant before it died may be gone.
    expect(outcome.lost).toBeLessThanOrEqual(50);
    expect(outcome.duplicated).toBeLessThanOrEqual(100);
  }, 180_000);

  it("without wait_replicas, replica 500 ms behind: the enqueues and completions of those 500 ms are lost with the primary", async () => {
    const outcome = await killPrimaryMidDrain({ waitReplicas: 0, replicaLagMs: 500 });
    console.log(JSON.stringify({ failover: outcome }));
    expect(outcome.acknowledged).toBe(1000);
    // The gap wait_replicas closes: acknowledged jobs that never run (those still waiting when the primary died),
    // and completions the replica never saw, whose jobs run again. The rest of the queue survives.
    expect(outcome.lost).toBeGreaterThan(0);
    expect(outcome.lost).toBeLessThan(outcome.acknowledged / 2);
  }, 180_000);

  it("with wait_replicas = 1, replica up to date: no acknowledged enqueue is lost", async () => {
    const outcome = await killPrimaryMidDrain({ waitReplicas: 1, replicaLagMs: 0 });
    console.log(JSON.stringify({ failover: outcome }));
    expect(outcome.acknowledged).toBe(1000);
    expect(outcome.lost).toBe(0);
    expect(outcome.duplicated).toBeLessThanOrEqual(100);
  }, 180_000);

  it("with wait_replicas = 1, replica 500 ms behind: enqueues wait or fail instead of being acknowledged, none is lost", async () => {
    const outcome = await killPrimaryMidDrain({ waitReplicas: 1, replicaLagMs: 500 });
    console.log(JSON.stringify({ failover: outcome }));
    expect(outcome.acknowledged).toBe(1000);
    expect(outcome.lost).toBe(0);
    expect(outcome.duplicated).toBeLessThanOrEqual(100);
  }, 180_000);
});
