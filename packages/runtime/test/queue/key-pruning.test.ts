import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/core/job.js";
import type { TaskLimits } from "../../src/core/limits.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { DEFAULT_RETENTION } from "../../src/core/retention.js";
import { createPruner } from "../../src/queue/pruner.js";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import type { MemoryStore } from "../../src/backends/memory/store.js";
import { makeJob, sleep } from "../conformance/harness.js";
import { openTestBackend, silentLogger } from "../postgres/pg-test-env.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "../redis/redis-test-env.js";

const FAIR = "prune.fair";
const FAIR_LIMITED = "prune.fair_limited";
const RATED = "prune.rated";
const ORDERED = "prune.ordered";
const KEEP = "keep";
const WINDOW_MS = 100;

const LIMITS = new Map<string, TaskLimits>([
  [FAIR, { concurrency: null, rateLimit: null, fair: { weights: {} } }],
  [FAIR_LIMITED, { concurrency: 1, rateLimit: null, perKey: true, fair: { weights: {} } }],
  [RATED, { concurrency: null, rateLimit: null, keyRate: { max: 1000, perMs: WINDOW_MS } }],
  [ORDERED, { concurrency: null, rateLimit: null, ordered: { onDead: "block" } }],
]);

function keyed(task: string, key: string, i = 0): Job {
  const job = makeJob({ task, payload: { key, i } });
  job.limitKey = key;
  return job;
}

/**
 * Runs jobs of 1 000 keys of a fair task (and 200 each of a fair task with per-key concurrency, a per-key rate limit
 * and order per key) to completion, leaving the `keep` key of each task with open jobs (one running, one waiting
 * behind it where the key allows one at a time), then runs the pruner once.
 */
async function runKeysThenPrune(backend: QueueBackend, before: () => Promise<void>): Promise<{ running: Job[] }> {
  await backend.setLimits({ limits: LIMITS });
  const jobs: Job[] = [];
  for (let k = 0; k < 1000; k++) jobs.push(keyed(FAIR, `f${k}`));
  for (let k = 0; k < 200; k++) jobs.push(keyed(FAIR_LIMITED, `c${k}`), keyed(RATED, `r${k}`), keyed(ORDERED, `o${k}`));
  for (const task of LIMITS.keys()) jobs.push(keyed(task, KEEP, 0), keyed(task, KEEP, 1));
  for (let i = 0; i < jobs.length; i += 500) await backend.enqueue({ jobs: jobs.slice(i, i + 500) });
  const running: Job[] = [];
  for (let round = 0; round < 50; round++) {
    const claimed = await backend.claim({ workerId: "prune-w", limit: 500, leaseMs: 60_000 });
    if (claimed.length === 0) break;
    for (const job of claimed) {
      if ((job.payload as { key: string }).key === KEEP) running.push(job);
      else await backend.complete({ workerId: "prune-w", job });
    }
  }
  // A later job of the fair task's kept key, due in an hour: its key stays in turn order.
  const later = keyed(FAIR, KEEP, 2);
  later.availableAt = new Date(Date.now() + 3_600_000);
  await backend.enqueue({ jobs: [later] });
  // The per-key rate windows have passed; on Redis a window's key also outlives its span by a second, then expires
  // by itself (docs/flow-control.md#pruning-per-key-state).
  await sleep(WINDOW_MS + 1_100);
  await before();
  const pruner = createPruner({ queues: [{ label: "q", backend, retention: DEFAULT_RETENTION }], intervalMs: 60_000, logger: silentLogger });
  try {
    await pruner.runOnce();
  } finally {
    await pruner.stop();
  }
  return { running };
}

/** The kept keys still run in order and in turn after the pruner: finishing the running ones lets the waiting ones start. */
async function expectKeptKeysStillHeld(backend: QueueBackend, running: Job[]): Promise<void> {
  // One job of the ordered key and of the key limited to one at a time waited behind a running one.
  const held = running.filter((j) => j.task === ORDERED || j.task === FAIR_LIMITED);
  expect(held.map((j) => j.task).sort()).toEqual([FAIR_LIMITED, ORDERED]);
  expect(await backend.claim({ workerId: "prune-w", limit: 10, leaseMs: 60_000 })).toEqual([]);
  for (const job of held) await backend.complete({ workerId: "prune-w", job });
  const next = await backend.claim({ workerId: "prune-w", limit: 10, leaseMs: 60_000 });
  expect(next.map((j) => `${j.task}:${(j.payload as { key: string }).key}`).sort()).toEqual([`${FAIR_LIMITED}:${KEEP}`, `${ORDERED}:${KEEP}`]);
}

describe("pruning per-key state (docs/flow-control.md#pruning-per-key-state)", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("PostgreSQL: the rows of keys whose jobs all finished are gone after the pruner ran; a key with open jobs keeps its rows", async () => {
    const { backend, database, cleanup } = await openTestBackend();
    cleanups.push(cleanup);
    const rows = async (table: string) =>
      (await database.sql.query<{ task: string; limit_key: string }>(`SELECT task, limit_key FROM ${table} WHERE queue = $1 ORDER BY task, limit_key`, ["jfast.jobs"])).map(
        (r) => `${r.task}:${r.limit_key}`,
      );
    const { running } = await runKeysThenPrune(backend, async () => {
      // The finished keys' turns, kept for when they come back (the fair task's last turns placed, the other's turn
      // counts), and their rate windows.
      expect((await rows("jfast_fair_keys")).length).toBeGreaterThanOrEqual(1000);
      expect((await rows("jfast_key_turns")).length).toBeGreaterThanOrEqual(200);
      expect((await rows("jfast_key_starts")).length).toBe(201);
    });
    expect(await rows("jfast_fair_keys")).toEqual([`${FAIR}:${KEEP}`]);
    expect((await rows("jfast_key_turns")).filter((r) => !r.endsWith(`:${KEEP}`))).toEqual([]);
    expect(await rows("jfast_key_starts")).toEqual([`${RATED}:${KEEP}`]);
    await expectKeptKeysStillHeld(backend, running);
  }, 120_000);

  it("memory: the turn counts and spent rate windows of keys whose jobs all finished are gone; a key with open jobs keeps its own", async () => {
    const backend = createMemoryBackend();
    await backend.setup();
    cleanups.push(() => backend.close());
    // The store is the backend's own; read here only to see what the pruner left.
    const store = (backend as unknown as { store: MemoryStore }).store;
    const { running } = await runKeysThenPrune(backend, async () => {
      expect(store.turns.size).toBeGreaterThanOrEqual(1000);
      expect(store.keyStarts.size).toBe(201);
    });
    expect([...store.turns.keys()].filter((k) => !k.endsWith(`\u0000${KEEP}`))).toEqual([]);
    expect([...store.keyStarts.keys()]).toEqual([`${RATED}\u0000${KEEP}`]);
    await expectKeptKeysStillHeld(backend, running);
  });

  it("Redis: the per-key entries of keys whose jobs all finished are gone after the pruner ran; a key with open jobs keeps its own", async () => {
    const queue = uniqueQueue("prune-keys");
    const backend = await openBackend(queue);
    const client = rawClient();
    cleanups.push(async () => {
      await backend.close();
      client.disconnect();
      await dropQueue(queue);
    });
    const { limitPrefix, pattern } = queueKeys({ queue });
    const { running } = await runKeysThenPrune(backend, async () => {
      expect(await client.hlen(`${limitPrefix}kturns:${FAIR}`)).toBeGreaterThanOrEqual(1000);
      expect(await client.scard(`${limitPrefix}kordered:${ORDERED}`)).toBe(201);
    });
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, found] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      keys.push(...found.filter((k) => k.startsWith(limitPrefix)));
      cursor = next;
    } while (cursor !== "0");
    const names = keys.map((k) => k.slice(limitPrefix.length));
    // Per-key keys left: only the kept key's (a key's slot holders are emptied by the claim when it comes back).
    expect(names.filter((n) => /^k(order|parked|starts):/.test(n) && !n.endsWith(`:${KEEP}`))).toEqual([]);
    for (const task of [FAIR, FAIR_LIMITED]) {
      expect((await client.hkeys(`${limitPrefix}kturns:${task}`)).sort()).toEqual([KEEP]);
      expect((await client.hkeys(`${limitPrefix}kticks:${task}`)).filter((k) => k !== "")).toEqual([KEEP]);
    }
    expect(await client.smembers(`${limitPrefix}kordered:${ORDERED}`)).toEqual([KEEP]);
    expect(await client.get(`${limitPrefix}korder:${ORDERED}:${KEEP}`)).toBe(running.find((j) => j.task === ORDERED)!.id);
    await expectKeptKeysStillHeld(backend, running);
  }, 120_000);
});
