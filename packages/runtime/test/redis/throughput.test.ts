import { afterEach, describe, expect, it } from "vitest";
import { HOUR_MS, MINUTE_MS, MINUTE_RETENTION_MS, THROUGHPUT_RETENTION_MS } from "../../src/core/throughput.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

describe("redis: throughput history in the queue's keys", () => {
  const queues: string[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await dropQueue(queue);
  });

  it("adds counts per minute and task, reads them back after a reconnect; minutes expire after a day, hours after 7 days", async () => {
    const queue = uniqueQueue("throughput");
    queues.push(queue);
    const now = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    const first = await openBackend(queue);
    const store = first.throughputStore();
    expect(store.kind).toBe("redis");
    await store.add([
      { minute: now - MINUTE_MS, task: "a.one", processed: 3, failed: 1, dead: 0 },
      { minute: now - MINUTE_MS, task: "a.two", processed: 0, failed: 2, dead: 1 },
      { minute: now, task: "a.one", processed: 5, failed: 0, dead: 0 },
    ]);
    await store.add([{ minute: now, task: "a.one", processed: 2, failed: 0, dead: 0 }]);
    await first.close();

    const second = await openBackend(queue);
    try {
      const all = await second.throughputStore().read({ from: now - 5 * MINUTE_MS });
      expect(all).toEqual([
        { minute: now - MINUTE_MS, processed: 3, failed: 3, dead: 1 },
        { minute: now, processed: 7, failed: 0, dead: 0 },
      ]);
      const two = await second.throughputStore().read({ from: now - 5 * MINUTE_MS, task: "a.two" });
      expect(two).toEqual([
        { minute: now - MINUTE_MS, processed: 0, failed: 2, dead: 1 },
        { minute: now, processed: 0, failed: 0, dead: 0 },
      ]);
      const client = rawClient();
      try {
        const ttl = await client.pttl(second.keys.throughput(now));
        expect(ttl).toBeGreaterThan(MINUTE_RETENTION_MS - 60_000);
        expect(ttl).toBeLessThanOrEqual(MINUTE_RETENTION_MS + HOUR_MS);
        const hourTtl = await client.pttl(second.keys.throughputHour(Math.floor(now / HOUR_MS) * HOUR_MS));
        expect(hourTtl).toBeGreaterThan(THROUGHPUT_RETENTION_MS - 60_000);
        expect(hourTtl).toBeLessThanOrEqual(THROUGHPUT_RETENTION_MS + HOUR_MS);
      } finally {
        client.disconnect();
      }
    } finally {
      await second.close();
    }
  });
});
