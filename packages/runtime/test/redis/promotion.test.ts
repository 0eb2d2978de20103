import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { eventually, makeJob, sleep } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

/** Delayed jobs and idle waiting: promotion in one step, blocking instead of polling, cross-process wake-ups. */
describe("redis: delays and waiting", () => {
  const backends: RedisBackend[] = [];
  const queues: string[] = [];
  const raw = rawClient();

  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
    await Promise.all(queues.splice(0).map((q) => dropQueue(q)));
  });
  afterAll(() => raw.disconnect());

  let queue = "";
  async function open(label: string, count = 1): Promise<RedisBackend[]> {
    queue = uniqueQueue(label);
    queues.push(queue);
    const opened = await Promise.all(Array.from({ length: count }, () => openBackend(queue)));
    backends.push(...opened);
    return opened;
  }

  it("promotes due jobs exactly once while many processes promote at the same moment", async () => {
    const group = await open("promote", 8);
    const first = group[0]!;
    const due = Date.now() + 800;
    const jobs = Array.from({ length: 400 }, (_, i) => makeJob({ availableAt: new Date(due + (i % 20)), payload: { i } }));
    await first.enqueue({ jobs });
    expect(await first.depths()).toMatchObject({ ready: 0, scheduled: 400 });
    await sleep(due + 40 - Date.now());
    // Every backend promotes (waitForWork runs the promote script) on its own connection, all at once.
    const controller = new AbortController();
    await Promise.all(group.flatMap((b) => [0, 1, 2].map(() => b.waitForWork({ signal: controller.signal, timeoutMs: 50 }))));
    const ready = await raw.lrange(first.keys.ready, 0, -1);
    // A promotion split over several commands would push some ids twice (or drop them) under this race.
    expect(ready).toHaveLength(400);
    expect(new Set(ready).size).toBe(400);
    expect(await raw.zcard(first.keys.scheduled)).toBe(0);

    const seen = new Map<string, number>();
    await Promise.all(
      group.map(async (b, w) => {
        for (;;) {
          const claimed = await b.claim({ workerId: `w${w}`, limit: 9, leaseMs: 30_000 });
          if (claimed.length === 0) return;
          for (const job of claimed) {
            seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
            await b.complete({ workerId: `w${w}`, job });
          }
        }
      }),
    );
    expect(seen.size).toBe(400);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it("hands out delayed jobs in the order they come due, never early", async () => {
    const [b] = await open("due-order");
    const now = Date.now();
    const late = makeJob({ availableAt: new Date(now + 450) });
    const early = makeJob({ availableAt: new Date(now + 150) });
    const middle = makeJob({ availableAt: new Date(now + 300) });
    await b!.enqueue({ jobs: [late, early, middle] });
    const order: string[] = [];
    await eventually("all three", async () => {
      for (const job of await b!.claim({ workerId: "w", limit: 3, leaseMs: 30_000 })) {
        expect(Date.now()).toBeGreaterThanOrEqual(job.availableAt.getTime());
        order.push(job.id);
      }
      return order.length === 3;
    });
    expect(order).toEqual([early.id, middle.id, late.id]);
  });

  it("blocks in Redis while idle instead of polling, and an abort ends the block at once", async () => {
    const [b] = await open("blocking");
    const controller = new AbortController();
    const waiting = b!.waitForWork({ signal: controller.signal, timeoutMs: 20_000 });
    const blocked = await eventually("a connection blocked in BLMOVE", async () => {
      const clients = await raw.client("LIST");
      return String(clients)
        .split("\n")
        .find((line) => line.includes(`name=jfast:${queue}:wait`) && line.includes("cmd=blmove"));
    });
    // Flag "b": blocked in Redis, not spinning in the client.
    expect(blocked).toMatch(/flags=b/);
    const started = Date.now();
    controller.abort();
    await waiting;
    expect(Date.now() - started).toBeLessThan(2000);
    // CLIENT UNBLOCK freed the connection: nothing stays blocked for the remaining ~20 s.
    await eventually("no connection still blocked", async () => {
      const clients = String(await raw.client("LIST"));
      return !clients.split("\n").some((line) => line.includes(`name=jfast:${queue}:wait`) && line.includes("flags=b"));
    }, 3000);
  });

  it("waking never takes a job off the ready list: an abandoned wait loses nothing", async () => {
    const [b] = await open("no-loss");
    const job = makeJob();
    const controller = new AbortController();
    const waiting = b!.waitForWork({ signal: controller.signal, timeoutMs: 20_000 });
    await sleep(100);
    await b!.enqueue({ jobs: [job] });
    await waiting;
    // The worker went away after waking, without claiming.
    controller.abort();
    expect(await raw.lrange(b!.keys.ready, 0, -1)).toEqual([job.id]);
    expect(await raw.keys(`${b!.keys.processingPrefix}*`)).toEqual([]);
    expect((await b!.claim({ workerId: "later", limit: 1, leaseMs: 30_000 })).map((j) => j.id)).toEqual([job.id]);
  });

  it("wakes a worker blocked in another process when a job is scheduled sooner than its wait would end", async () => {
    const [waiter, producer] = await open("cross-wake", 2);
    const controller = new AbortController();
    const waiting = waiter!.waitForWork({ signal: controller.signal, timeoutMs: 30_000 });
    await sleep(150);
    const job = makeJob({ delayMs: 300 });
    await producer!.enqueue({ jobs: [job] });
    // The wait planned for 30 s ends now: the producer announced the new due time on the queue's channel.
    const outcome = await Promise.race([waiting.then(() => "woken"), sleep(10_000).then(() => "still waiting")]);
    expect(outcome).toBe("woken");
    // The next wait lasts until the job is due, and the job is there.
    await waiter!.waitForWork({ signal: controller.signal, timeoutMs: 30_000 });
    const claimed = await eventually("the delayed job", async () => {
      const got = await waiter!.claim({ workerId: "w", limit: 1, leaseMs: 30_000 });
      return got.length ? got : null;
    });
    expect(claimed.map((j) => j.id)).toEqual([job.id]);
    expect(Date.now()).toBeGreaterThanOrEqual(job.availableAt.getTime());
    controller.abort();
  });
});
