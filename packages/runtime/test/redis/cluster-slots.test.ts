import { afterAll, describe, expect, it } from "vitest";
import type { Cluster } from "ioredis";
import { SCRIPT_NAMES, type ScriptName } from "../../src/backends/redis/scripts.js";
import { planFlow, planSpawn } from "../../src/core/flow.js";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { ListOrder, ListState, type SlotOffer } from "../../src/core/queue-backend.js";
import type { Job } from "../../src/core/job.js";
import { RetainedState } from "../../src/core/retention.js";
import { makeJob, sleep } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";
import { redisCluster } from "./redis-cluster-env.js";

const target = redisCluster();
const raw = rawClient(target) as Cluster;

/**
 * Failed script calls and CROSSSLOT refusals each primary has counted so far, summed over the cluster (INFO
 * commandstats, errorstats). A script that touched a key outside its slot fails as an EVALSHA/EVAL call.
 */
async function refusals(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const node of raw.nodes("master")) {
    const stats = `${await node.info("commandstats")}\n${await node.info("errorstats")}`;
    for (const [, command, rejected, failed] of stats.matchAll(/cmdstat_(evalsha|eval|fcall):.*rejected_calls=(\d+),failed_calls=(\d+)/g)) {
      // A command first used after `before` shows up with zero refusals: only refusals count.
      const refused = Number(rejected) + Number(failed);
      if (refused > 0) counts[command!] = (counts[command!] ?? 0) + refused;
    }
    for (const [, count] of stats.matchAll(/errorstat_CROSSSLOT:count=(\d+)/g)) counts.CROSSSLOT = (counts.CROSSSLOT ?? 0) + Number(count);
  }
  return counts;
}

/**
 * Every script of the Redis queue touches one slot, the queue's hash tag: on the Cluster the scripts carry a
 * shebang, so Redis itself refuses any key outside that slot (the first test shows the refusal is live on these
 * nodes); the second runs every script and fails on any error; afterwards every key of the queue is in the slot.
 */
describe("redis cluster: one slot per queue", () => {
  afterAll(() => raw.disconnect());

  it("the nodes refuse a shebang script that touches a key outside its declared slot", async () => {
    await expect(raw.eval("#!lua\nredis.call('SET', KEYS[1], 1)\nreturn redis.call('GET', '{another-tag}:x')", 1, "{jfast-test.slot-probe}:a")).rejects.toThrow(
      /do not hash to the same slot|non local key/,
    );
    await raw.del("{jfast-test.slot-probe}:a");
  });

  it("runs every script of the queue on the Cluster without a cross-slot error, and keeps every key in the queue's slot", async () => {
    const queue = uniqueQueue("slots");
    const ran = new Set<ScriptName>();
    let backend: RedisBackend | null = null;
    const before = await refusals();
    try {
      backend = await openBackend(queue, { workerTtlMs: 300 }, target);
      // Which scripts each operation runs, learnt from the commands ioredis is asked to send.
      const commands = (backend as unknown as { redis: Record<string, unknown> }).redis;
      for (const name of SCRIPT_NAMES) {
        const command = `jfast_${name.replace(/-/g, "_")}`;
        const original = commands[command] as (...args: unknown[]) => unknown;
        commands[command] = (...args: unknown[]) => {
          ran.add(name);
          return original.apply(commands, args);
        };
      }
      const worker = "slots-worker";
      const [a, b, c, d, e] = Array.from({ length: 5 }, (_, i) => makeJob({ task: `slots.t${i % 2}`, payload: { i }, maxAttempts: 1 }));
      await backend.enqueue({ jobs: [a!, b!, c!, d!] });
      await backend.claim({ workerId: worker, limit: 4, leaseMs: 30_000 });
      await backend.extendLeases({ workerId: worker, jobIds: [a!.id], leaseMs: 30_000 });
      await backend.complete({ workerId: worker, job: a! });
      await backend.retry({ workerId: worker, job: b!, error: { attempt: 1, at: new Date().toISOString(), class: "Error", message: "x" }, availableAt: new Date(Date.now() + 50) });
      await backend.kill({ workerId: worker, job: c!, error: { attempt: 1, at: new Date().toISOString(), class: "Error", message: "y" } });
      await backend.release({ workerId: worker, jobs: [d!] });
      // A snooze of a claimed job (its attempt given back) and the cancel of a waiting one.
      const later = makeJob({ task: "slots.t1", payload: { i: 6 }, maxAttempts: 1, delayMs: 60_000 });
      await backend.enqueue({ jobs: [makeJob({ task: "slots.t0", payload: { i: 5 }, maxAttempts: 1 }), later] });
      const [snoozing] = await backend.claim({ workerId: worker, limit: 1, leaseMs: 30_000 });
      await backend.snooze({ workerId: worker, job: snoozing!, availableAt: new Date(Date.now() + 60_000), maxSnoozes: 5 });
      expect(await backend.cancel({ id: later.id })).toMatchObject({ cancelled: true });
      await sleep(60);
      await backend.waitForWork({ signal: new AbortController().signal, timeoutMs: 20 });
      // An id with nothing stored (set aside inside claim.lua), and a stored job that cannot be read (quarantine.lua).
      await raw.lpush(backend.keys.ready, "no-such-job");
      await raw.hset(backend.keys.job("unreadable"), "json", "{not json", "state", "ready", "attempts", 0);
      await raw.lpush(backend.keys.ready, "unreadable");
      await backend.claim({ workerId: worker, limit: 5, leaseMs: 30_000 });
      expect((await backend.listDead({ limit: 10 })).length).toBeGreaterThan(0);
      await backend.retryDead({ ids: [c!.id] });
      await backend.discardDead({ all: true });
      await backend.depthsByTask();
      await backend.depths();
      const pauses = backend.pauseStore();
      await pauses.pause({ task: "slots.t0", by: "test" });
      await pauses.resume({ task: "slots.t0" });
      // An idle worker of this process offering a slot: the enqueue stores the job claimed by it.
      const delivered: Job[] = [];
      const offer: SlotOffer = { workerId: worker, leaseMs: 30_000, pausedTasks: () => [], reserve: (n) => Math.min(n, 1), deliver: (jobs) => delivered.push(...jobs), cancel: () => undefined };
      await backend.claim({ workerId: worker, limit: 10, leaseMs: 30_000 });
      const withdraw = backend.offerSlots(offer);
      await backend.enqueue({ jobs: [e!] });
      withdraw();
      expect(delivered.map((j) => j.id)).toEqual([e!.id]);
      await backend.throughputStore().add([{ minute: Math.floor(Date.now() / 60_000) * 60_000, task: "slots.t0", processed: 1, failed: 0, dead: 0 }]);
      // Editing a scheduled job, running it now, deleting a waiting one, and a unique job's enqueue.
      const [soon, gone] = [7, 8].map((i) => makeJob({ task: "slots.t1", payload: { i }, maxAttempts: 1, delayMs: 60_000 }));
      await backend.enqueue({ jobs: [soon!, gone!] });
      await backend.updateJob({ id: soon!.id, task: "slots.t1", payload: { i: 70 }, priority: 1, availableAt: new Date(Date.now() + 120_000) });
      await backend.runNow({ id: soon!.id });
      await backend.deleteJob({ id: gone!.id });
      await backend.enqueue({ jobs: [makeJob({ task: "slots.t0", payload: { i: 9 }, maxAttempts: 1, unique: { key: "slots" } })] });
      // Task limits: a claim that starts a limited job, parks one over the limit and takes it back once a slot frees.
      await backend.setLimits({ limits: new Map([["slots.limited", { concurrency: 1, rateLimit: { max: 10, perMs: 1000 } }]]) });
      const [l1, l2] = [10, 11].map((i) => makeJob({ task: "slots.limited", payload: { i }, maxAttempts: 1 }));
      await backend.enqueue({ jobs: [l1!, l2!] });
      const [first] = await backend.claim({ workerId: worker, limit: 5, leaseMs: 30_000 });
      if (first) await backend.complete({ workerId: worker, job: first });
      await backend.claim({ workerId: worker, limit: 5, leaseMs: 30_000 });
      await backend.limitUsage({ task: "slots.limited" });
      // A flow: written whole, a step completed with steps it spawned, its parents' outcomes read, then cancelled.
      const flow = planFlow({ steps: { split: makeJob({ task: "slots.flow", payload: { i: 12 } }), after: { job: makeJob({ task: "slots.flow", payload: { i: 13 } }), after: ["split"] } } });
      await backend.enqueueFlow({ flow });
      await backend.setLimits({ limits: new Map() });
      const claimed = await backend.claim({ workerId: worker, limit: 20, leaseMs: 30_000 });
      const split = claimed.find((job) => job.id === flow.steps[0]!.job.id)!;
      const spawn = planSpawn({ job: split, flow: split.flow! }, { line: makeJob({ task: "slots.flow", payload: { i: 14 } }) });
      await backend.complete({ workerId: worker, job: split, result: { value: 1 }, spawn });
      expect((await backend.parentOutcomes({ jobIds: [split.id] })).get(split.id)).toEqual({ state: "completed", result: 1 });
      expect((await backend.getFlow({ id: flow.id }))?.total).toBe(3);
      expect((await backend.listFlows({ limit: 5 })).rows.map((f) => f.id)).toEqual([flow.id]);
      expect((await backend.cancelFlow({ id: flow.id }))?.cancelled).toHaveLength(2);
      // A running job's progress; a job claimed after its deadline, and one the deadline sweep ends.
      const [progressing, late, swept] = [15, 16, 17].map((i) => makeJob({ task: "slots.life", payload: { i }, maxAttempts: 1, ...(i === 15 ? {} : { expiresInMs: 60_000 }) }));
      await backend.enqueue({ jobs: [progressing!, late!] });
      const lifeClaims = await backend.claim({ workerId: worker, limit: 20, leaseMs: 30_000 });
      const running = lifeClaims.find((job) => job.id === progressing!.id)!;
      await backend.setProgress({ workerId: worker, job: running, progress: 40 });
      const lateClaimed = lifeClaims.find((job) => job.id === late!.id)!;
      await backend.expire({ workerId: worker, job: lateClaimed, error: { attempt: 0, at: new Date().toISOString(), class: "JobExpired", message: "late" } });
      swept!.expiresAt = new Date(Date.now() + 20);
      await backend.enqueue({ jobs: [swept!] });
      await sleep(40);
      await backend.expireDue({ limit: 10 });
      // A debounced job (its key's registry in the queue's slot) and a fair task's job (its key's own list).
      const debounced = makeJob({ task: "slots.debounced", payload: { i: 18 }, maxAttempts: 1 });
      debounced.debounce = { key: "doc-1", delayMs: 60_000, maxWaitMs: null };
      await backend.enqueue({ jobs: [debounced] });
      await backend.setLimits({ limits: new Map([["slots.fair", { concurrency: null, rateLimit: null, fair: { weights: {} } }]]) });
      const fairJob = makeJob({ task: "slots.fair", payload: { i: 19 }, maxAttempts: 1 });
      fairJob.limitKey = "acme";
      await backend.enqueue({ jobs: [fairJob] });
      // The ready listing reads the lists of jobs held off the ready lists (list-keyed.lua).
      expect((await backend.listJobs({ state: ListState.ready, order: ListOrder.oldest, limit: 50 })).rows.map((r) => r.job.id)).toContain(fairJob.id);
      await backend.claim({ workerId: worker, limit: 5, leaseMs: 30_000 });
      await backend.setLimits({ limits: new Map() });
      // The pruner: its lease, then a batch of each retained state.
      expect(await backend.claimPruner({ owner: "slots-pruner", ttlMs: 10_000 })).toBe(true);
      for (const state of [RetainedState.completed, RetainedState.dead, RetainedState.cancelled]) {
        await backend.prune({ state, select: { before: new Date(Date.now() + 60_000) }, limit: 10 });
      }
      await backend.prune({ state: RetainedState.completed, select: { keepNewest: 0 }, limit: 10 });
      // Per-key bookkeeping of keys with no open job (the fair key above, whose job was claimed).
      await backend.pruneKeys({ limit: 10 });
      await backend.releasePruner({ owner: "slots-pruner" });
      // recover runs in both modes: "own" on a worker id's first claim and at close, "stale" in every sweep.
      await backend.sweep();
      // keys rotate: waiting jobs rewritten in place.
      await backend.enqueue({ jobs: [makeJob({ task: "slots.t0", payload: { i: 11 } })] });
      expect((await backend.rewriteStored({ rewrite: (parts) => ({ ...parts, payload: { rewritten: true } }) })).waiting).toBeGreaterThan(0);
      await backend.close();
      backend = null;

      expect([...ran].sort()).toEqual([...SCRIPT_NAMES].sort());
      expect(await refusals()).toEqual(before);

      // Every key of the queue, found on any primary, hashes to the queue's one slot.
      const slot = Number(await raw.cluster("KEYSLOT", `{${queue}}`));
      const found: Array<{ key: string; slot: number }> = [];
      for (const node of raw.nodes("master")) {
        let cursor = "0";
        do {
          const [next, keys] = await node.scan(cursor, "MATCH", `{${queue}}:*`, "COUNT", 500);
          for (const key of keys) found.push({ key, slot: Number(await node.cluster("KEYSLOT", key)) });
          cursor = next;
        } while (cursor !== "0");
      }
      expect(found.length).toBeGreaterThan(5);
      expect(found.filter((k) => k.slot !== slot)).toEqual([]);
    } finally {
      await backend?.close();
      await dropQueue(queue, undefined, target);
    }
  }, 60_000);
});
