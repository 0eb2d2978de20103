import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Admin } from "kafkajs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMemoryAlertStore } from "../../src/alerts/alert-store.js";
import { createAlerter } from "../../src/alerts/alerter.js";
import { alertRuleSchema, resolveAlerting } from "../../src/alerts/config.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { Event } from "../../src/core/event.js";
import type { EventsBus } from "../../src/kafka/events-bus.js";
import { on } from "../../src/kafka/on.js";
import { createLogger } from "../../src/observability/logger.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { DASHBOARD, call } from "../admin/admin-harness.js";
import { BROKER, closedPort, connectAdmin, eventually, requireBroker, sleep, uniqueName } from "../kafka/harness.js";
import { loadBillingToml, receiver, type Receiver } from "./receiver.js";

const ALERTING = `[alerting]\ninterval = "150ms"\nretries = 2\nretry_backoff = "50ms"\n`;

describe("kafka_lag in jfast.toml is checked at load", () => {
  const load = loadBillingToml;
  const kafka = `[plugins]\nenabled = ["queue", "kafka"]\n\n[plugin.queue]\nbackend = "memory"\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\n\n`;
  const rule = (more = "") => `[[alerts]]\nname = "orders behind"\nrule = "kafka_lag"\nthreshold = 100\nwebhook = "https://hooks.example.com/jfast"\n${more}`;

  it("takes a rule, with a topic, where the service has Kafka", async () => {
    const config = (await load(kafka + rule(`topic = "orders"\n`))) as Awaited<ReturnType<typeof loadConfig>>;
    expect(config.alerts?.rules).toEqual([expect.objectContaining({ name: "orders behind", rule: "kafka_lag", topic: "orders", threshold: 100 })]);
  });

  it("refuses it without Kafka, naming [plugin.kafka] and the docs", async () => {
    const error = (await load(`[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "memory"\n\n${rule()}`)) as Error & { code?: string };
    expect(error.code).toBe("CONFIG_PLUGIN_MISSING");
    expect(error.message).toContain('[[alerts]] "orders behind" is a kafka_lag rule, and this service has no Kafka configured');
    expect(error.message).toContain("configure [plugin.kafka]");
    expect(error.message).toContain("jfast docs alerts#rules");
  });

  it("lets a service start whose kafka plugin is only turned off in this process", async () => {
    const config = (await load(kafka + rule(), { JFAST_DISABLE_PLUGINS: "kafka" })) as Awaited<ReturnType<typeof loadConfig>>;
    expect(config.kafka).toBeNull();
    expect(config.alerts?.rules.map((r) => r.rule)).toEqual(["kafka_lag"]);
  });

  it("refuses task and queue on kafka_lag, and topic on any other rule, saying what to do", async () => {
    const task = (await load(kafka + rule(`task = "billing.charge"\n`))) as Error;
    expect(task.message).toContain("kafka_lag watches the service's Kafka consumer group (its on(...) handlers), not a task or a queue: drop task and queue");
    expect(task.message).toContain('topic = "…" narrows it to one topic');
    const queue = (await load(kafka + rule(`queue = "default"\n`))) as Error;
    expect(queue.message).toContain("[alerts] 0.queue");
    expect(queue.message).toContain("drop task and queue");
    const topic = (await load(kafka + `[[alerts]]\nname = "dying"\nrule = "dead_letters"\ntopic = "orders"\nthreshold = 1\nwebhook = "https://hooks.example.com/jfast"\n`)) as Error;
    expect(topic.message).toContain("topic narrows a kafka_lag rule only: drop it from this dead_letters rule");
    expect(((await load(kafka + rule(`topic = "no spaces"\n`))) as Error).message).toContain("topic is a Kafka topic name");
  });
});

describe("kafka_lag against the real broker", () => {
  let admin: Admin;
  let jfast: Jfast | null = null;
  let root: string | null = null;
  let hooks: Receiver | null = null;
  let release: () => void = () => {};
  beforeAll(async () => {
    await requireBroker();
    admin = await connectAdmin();
  });
  afterAll(() => admin?.disconnect());
  afterEach(async () => {
    // A handler still held would keep the consumer from stopping.
    release();
    await jfast?.stop();
    await hooks?.close();
    if (root) await rm(root, { recursive: true, force: true });
    jfast = null;
    hooks = null;
    root = null;
  });

  it("fires when the group falls more than the threshold behind, naming the worst partition, and resolves once it caught up", { timeout: 90_000 }, async () => {
    hooks = await receiver();
    const topic = uniqueName("alerts.orders");
    const group = uniqueName("billing-lag");
    root = await mkdtemp(path.join(tmpdir(), "jfast-kafka-lag-"));
    const alert = (name: string, threshold: number, more = "") =>
      `[[alerts]]\nname = "${name}"\nrule = "kafka_lag"\nthreshold = ${threshold}\nwindow = "1m"\ncooldown = "0s"\nwebhook = "${hooks!.url}"\n${more}\n`;
    await writeFile(
      path.join(root, "jfast.toml"),
      [
        `[service]\nname = "billing"\n\n[plugins]\nenabled = ["queue", "kafka"]\n\n[plugin.queue]\nbackend = "memory"\n\n[plugin.kafka]\nbootstrap_servers = "${BROKER}"\nconsumer_group = "${group}"\n\n${ALERTING}`,
        alert("orders behind", 2, `topic = "${topic}"`),
        // Seven behind is not more than seven: this one never fires.
        alert("far behind", 7),
      ].join("\n"),
    );
    // The subscriber is held on its first message of each partition: nothing is committed until it is let go.
    const gate = new Promise<void>((resolve) => (release = resolve));
    let handled = 0;
    jfast = await createJfast({
      root,
      env: { JFAST_ADMIN_TOKENS: `ops-dashboard:dashboard:${DASHBOARD}` },
      logger: createLogger({ service: "billing", level: "silent" }),
      handlers: [
        on(topic, async () => {
          await gate;
          handled++;
        }),
      ],
    });
    await jfast.start();

    // Seven events over the topic's partitions (three on the test broker), by key.
    const events = Array.from({ length: 7 }, (_, i) => new Event({ type: "order.placed", data: { n: i }, key: `order-${i}` }));
    await jfast.require<EventsBus>("events").publish(topic, events);
    const ends = await admin.fetchTopicOffsets(topic);
    const perPartition = new Map(ends.map((p) => [p.partition, Number(p.high) - Number(p.low)]));
    const worst = Math.max(...perPartition.values());
    expect([...perPartition.values()].reduce((a, b) => a + b, 0)).toBe(7);

    await eventually("the firing notification", async () => hooks!.bodies.length >= 1, 30_000);
    const firing = hooks.bodies[0]!;
    expect(firing).toMatchObject({
      alert: "orders behind",
      rule: "kafka_lag",
      state: "firing",
      value: 7,
      threshold: 2,
      topic,
      task: null,
      queue: null,
      service: "billing",
      kafka: { group, topic, lag: 7, partitionLag: worst },
    });
    const named = (firing.kafka as { partition: number }).partition;
    expect(perPartition.get(named)).toBe(worst);
    expect(firing.text).toContain(`kafka_lag of topic ${topic} is 7 messages behind (threshold 2`);
    expect(firing.text).toContain(`worst: group ${group}, topic ${topic} 7 behind, partition ${named} ${worst} behind`);

    // A rule of a topic the service does not consume, made at run time, is refused naming the ones it does.
    const refused = await call(jfast, "alerts.create", {
      token: DASHBOARD,
      actor: "operator ana",
      mutation: true,
      input: { name: "elsewhere", rule: "kafka_lag", topic: "payments", threshold: 1, webhook: hooks.url },
    });
    expect(refused.error?.data.code).toBe("BAD_REQUEST");
    expect(refused.error?.message).toContain(`watches topic "payments", which no on(...) handler of this service consumes: use one of "${topic}"`);

    release();
    await eventually("every event handled", async () => handled === 7, 30_000);
    await eventually("the resolved notification", async () => hooks!.bodies.length >= 2, 30_000);
    expect(hooks.bodies[1]).toMatchObject({ alert: "orders behind", state: "resolved", value: 0, kafka: { group, topic, lag: 0, partitionLag: 0 } });
    // One post per change of state; the rule at seven never fired.
    await sleep(600);
    expect(hooks.bodies.map((b) => [b.alert, b.state])).toEqual([
      ["orders behind", "firing"],
      ["orders behind", "resolved"],
    ]);
  });

  it("keeps its state and says so once while Kafka cannot be reached, without holding the evaluator", { timeout: 60_000 }, async () => {
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({ service: "billing", level: "debug", write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
    const port = await closedPort();
    const rule = alertRuleSchema.parse({ name: "orders behind", rule: "kafka_lag", threshold: 0, cooldown: "0s", webhook: "http://127.0.0.1:9/never" });
    const store = createMemoryAlertStore();
    const alerter = createAlerter({
      config: { ...resolveAlerting([rule], undefined), intervalMs: 100 },
      store,
      // kafka_lag reads Kafka only; the queue is never asked.
      queue: {} as QueueProvider,
      service: { name: "billing", environment: "test" },
      logger,
      timer: false,
      kafka: { service: "billing", brokers: { brokers: [`127.0.0.1:${port}`], from: "bootstrap_servers" }, consumerGroup: "billing", topicPrefix: "", topics: ["orders"] },
    });
    try {
      const started = Date.now();
      expect(await alerter.runOnce()).toBe(true);
      expect(await alerter.runOnce()).toBe(true);
      expect(Date.now() - started).toBeLessThan(25_000);
      expect((await alerter.list()).map((v) => [v.rule.name, v.state])).toEqual([["orders behind", "ok"]]);
      expect(await store.history({ limit: 10 })).toEqual([]);
      const warned = logs.filter((l) => l.level === "warn" && String(l.msg ?? l.message).includes('alert "orders behind" could not be evaluated'));
      expect(warned).toHaveLength(1);
      expect(JSON.stringify(warned[0])).toContain(`cannot reach Kafka at 127.0.0.1:${port}`);
    } finally {
      await alerter.stop();
    }
  });
});
