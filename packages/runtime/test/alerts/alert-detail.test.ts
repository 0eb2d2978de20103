import { afterEach, describe, expect, it } from "vitest";
import { createMemoryAlertStore, DETAIL_MAX, type AlertEvent, type AlertStore } from "../../src/alerts/alert-store.js";
import { createRedisAlertStore } from "../../src/alerts/redis-store.js";
import { createSqlAlertStore } from "../../src/alerts/sql-store.js";
import type { DatabaseProvider } from "../../src/database/database-provider.js";
import { dropSchema, openTestDatabase, uniqueSchema } from "../postgres/pg-test-env.js";
import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";

const entry = (more: Partial<Omit<AlertEvent, "id">>): Omit<AlertEvent, "id"> => ({
  alert: "invoices ship",
  rule: "promise",
  state: "firing",
  value: 1,
  threshold: 1,
  at: Date.now(),
  webhook: "https://hooks.example.com/jfast",
  delivery: "pending",
  attempts: 0,
  lastError: null,
  deliveredAt: null,
  detail: null,
  example: null,
  ...more,
});

const LATE = "request r-123: late at subscriber_job — shipping's job shipment.create is waiting to retry after 2 failures";

/** What every store keeps of a notification's detail: the line, a promise's request/hop/service, within bounds. */
async function keepsDetail(store: AlertStore): Promise<void> {
  const promise = await store.record(entry({ detail: LATE, example: { requestId: "r-123", hop: "subscriber_job", service: "shipping" } }));
  await store.updateDelivery({ id: promise, delivery: "delivered", attempts: 1, lastError: null, deliveredAt: Date.now() });
  await store.record(entry({ alert: "orders lag", rule: "kafka_lag", value: 150, threshold: 100, detail: "group g, topic orders 150 behind, partition 2 90 behind" }));
  await store.record(entry({ alert: "long", detail: `request r-9: late at kafka — ${"x".repeat(5_000)}`, example: { requestId: "r".repeat(1_000), hop: "kafka", service: "shipping" } }));
  await store.record(entry({ state: "resolved", value: 0 }));

  const [resolved, long, lag, late] = await store.history({ limit: 10 });
  expect(late).toMatchObject({ alert: "invoices ship", delivery: "delivered", detail: LATE, example: { requestId: "r-123", hop: "subscriber_job", service: "shipping" } });
  expect(lag).toMatchObject({ rule: "kafka_lag", detail: "group g, topic orders 150 behind, partition 2 90 behind", example: null });
  expect(long!.detail!.length).toBe(DETAIL_MAX);
  expect(long!.detail).toMatch(/^request r-9: late at kafka — x+…$/);
  expect(long!.example!.requestId.length).toBeLessThanOrEqual(200);
  expect(resolved).toMatchObject({ state: "resolved", detail: null, example: null });
  expect((await store.history({ alert: "invoices ship", limit: 10 })).map((e) => e.detail)).toEqual([null, LATE]);
}

describe("alert history keeps each notification's detail", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it("on PostgreSQL (migration 0042)", { timeout: 30_000 }, async () => {
    const schema = uniqueSchema("alert_detail");
    closers.push(() => dropSchema(schema));
    const database: DatabaseProvider = await openTestDatabase({ schema });
    closers.push(() => database.close());
    await keepsDetail(createSqlAlertStore({ db: database.sql }));
  });

  it("on Redis", { timeout: 30_000 }, async () => {
    const queue = uniqueQueue("alert-detail");
    closers.push(() => dropQueue(queue));
    const store = createRedisAlertStore({ url: REDIS_URL, queue });
    closers.push(() => store.close());
    await keepsDetail(store);
  });

  it("in memory", async () => {
    await keepsDetail(createMemoryAlertStore());
  });
});
