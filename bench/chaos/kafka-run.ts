/**
 * Kafka: a broker of the run's own, and an `on` handler consuming CHAOS_JOBS events of a topic while the broker
 * is killed with -9 and started again (`engine`), or while the network between the broker and every client
 * misbehaves (`network`): the broker advertises a FaultProxy's port, so the consumer's and the publisher's
 * connections all go through it. The handler applies each event inside a transaction guarded by the inbox
 * (`claimOnce` on the event id), the way docs/events.md has a consumer make its effects once: redeliveries are
 * counted as runs twice, effects must stay single, every published event must be applied, and the group's
 * offsets must reach the end of the topic (stuck: what is left of its lag).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { claimOnce, createJfast, createLogger, Event, on, type DatabaseProvider, type EventsBus, type Jfast } from "@jfast/runtime";
import { services, sleep } from "../lib/subject.js";
import type { ScenarioResult } from "./harness.js";
import { startPrivateKafka, type PrivateKafka } from "./private-kafka.js";
import { FaultProxy } from "./proxy.js";
import type { BackendRun } from "./run-backend.js";
import { NETWORK_SCENARIO, type NetworkFault } from "./scenarios.js";

/** kafkajs's consumer session timeout, which the events consumer keeps: a member silent this long is expelled. */
export const KAFKA_SESSION_TIMEOUT_S = 30;

type KafkaFault = "engine" | NetworkFault;

/** The live part of a batch: LIVE_BATCH events per publish, LIVE_EVERY_MS apart; PROBE events after the fault. */
const LIVE_BATCH = 10;
const LIVE_EVERY_MS = 50;
const PROBE = 10;

const SCENARIO: Record<KafkaFault, string> = {
  engine: "Kafka broker kill -9 mid-consume",
  latency: NETWORK_SCENARIO.latency,
  cut: "network: connections cut mid-request",
  blackhole: `network: black hole ${KAFKA_SESSION_TIMEOUT_S + 3} s (session timeout ${KAFKA_SESSION_TIMEOUT_S} s)`,
  halfclose: NETWORK_SCENARIO.halfclose,
};

export async function runKafka(params: { events: number; runs: number; scenarios: string[]; network: NetworkFault[] }): Promise<BackendRun> {
  const problems: string[] = [];
  const scenarios: ScenarioResult[] = [];
  let kafka: PrivateKafka | null = null;
  // The one proxy in front of the broker (made once the broker's port is known, before it starts).
  const proxies: FaultProxy[] = [];
  const schema = `jfast_chaos_kafka_${randomBytes(4).toString("hex")}`;
  const db = new pg.Pool({ connectionString: services.postgres, max: 3 });
  db.on("error", () => undefined);
  const faults: KafkaFault[] = [...(params.scenarios.includes("engine") ? (["engine"] as const) : []), ...(params.scenarios.includes("network") ? params.network : [])];
  try {
    if (faults.length === 0) return { backend: "kafka", scenarios, extras: [], problems };
    kafka = await startPrivateKafka({
      advertise: async (port) => {
        const proxy = new FaultProxy({ host: "127.0.0.1", port });
        proxies.push(proxy);
        return proxy.listen();
      },
    });
    await db.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.chaos_effects (n integer NOT NULL, phase text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    for (let run = 0; run < params.runs; run++) {
      for (const fault of faults) {
        const t = Date.now();
        const r = await consumeThrough({ kafka, proxy: proxies[0]!, db, schema, events: params.events, fault });
        scenarios.push(r);
        console.log(
          `chaos: kafka / ${r.scenario}: lost ${r.lost}, duplicated ${r.duplicated}, runs twice ${r.runsTwice}, stuck ${r.stuck}, ${((Date.now() - t) / 1000).toFixed(1)} s${r.problems.length ? ` — ${r.problems.join("; ")}` : ""}`,
        );
      }
    }
  } catch (error) {
    problems.push(`the run itself failed: ${(error as Error).stack ?? error}`);
  } finally {
    for (const p of proxies) await p.close().catch(() => undefined);
    await kafka?.destroy();
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.end().catch(() => undefined);
  }
  return { backend: "kafka", scenarios, extras: [], problems };
}

/**
 * One batch of events on a fresh topic and consumer group: a third published up front and consumed, the middle
 * published live in small batches (the consumer caught up, fetching as they come), the fault made halfway
 * through the middle, the last PROBE events published once it has ended. A publish that fails is retried with
 * the same events (same ids, as the outbox relay does), so every event of the batch is expected; a copy stored
 * twice reaches the handler twice and the inbox skips its effect.
 * Recovery: from the fault's end (the broker back, the latency lifted, the connections cut or half-closed, the
 * held bytes delivered) until the first event published after it was applied.
 */
async function consumeThrough(params: { kafka: PrivateKafka; proxy: FaultProxy; db: pg.Pool; schema: string; events: number; fault: KafkaFault }): Promise<ScenarioResult> {
  const { kafka, proxy, db, schema, events, fault } = params;
  const id = randomBytes(4).toString("hex");
  const topic = `chaos.kafka.${id}`;
  const out: ScenarioResult = { backend: "kafka", scenario: SCENARIO[fault], jobs: events, lost: 0, duplicated: 0, runsTwice: 0, stuck: 0, recoveryMs: [], notes: [], problems: [], findings: [] };
  const base = Number((await db.query(`SELECT coalesce(max(n) + 1, 0)::int AS n FROM ${schema}.chaos_effects`)).rows[0].n);
  let jfast: Jfast | null = null;
  const handler = on(topic, async (event) => {
    const n = (event.data as { n: number }).n;
    await db.query(`INSERT INTO ${schema}.chaos_effects (n, phase) VALUES ($1, 'started')`, [n]);
    await sleep(1 + Math.random() * 4);
    const database = jfast!.require<DatabaseProvider>("database");
    await database.transaction(async (session) => {
      const executor = database.executorFor(session);
      if (await claimOnce(executor, { consumer: "chaos.kafka", key: event.id })) {
        await executor.query(`INSERT INTO ${schema}.chaos_effects (n, phase) VALUES ($1, 'finished')`, [n]);
      }
    });
  });
  const root = await mkdtemp(path.join(tmpdir(), "jfast-chaos-kafka-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "chaos-kafka"\n[plugins]\nenabled = ["database", "kafka"]\n[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\n[plugin.kafka]\nconsumer_group = "chaos-${id}"\n`,
  );
  const count = async () =>
    (
      await db.query(
        `SELECT (SELECT count(DISTINCT n)::int FROM ${schema}.chaos_effects WHERE phase = 'finished' AND n >= $1) AS distinct,
                (SELECT count(*)::int FROM ${schema}.chaos_effects WHERE phase = 'finished' AND n >= $1) AS total,
                (SELECT count(*)::int FROM (SELECT n FROM ${schema}.chaos_effects WHERE phase = 'started' AND n >= $1 GROUP BY n HAVING count(*) > 1) t) AS twice`,
        [base],
      )
    ).rows[0] as { distinct: number; total: number; twice: number };
  const applied = async () => (await count()).distinct;
  const head = Math.floor(events / 3);
  const probe = Math.min(PROBE, events - head);
  let published = 0;
  let retried = 0;
  try {
    jfast = await createJfast({ root, env: { KAFKA_BROKERS: kafka.brokers }, handlers: [handler], logger: createLogger({ service: "chaos-kafka", level: process.env.CHAOS_DEBUG ? "warn" : "error" }) });
    await jfast.start();
    const bus = jfast.require<EventsBus>("events");
    const publish = async (from: number, to: number) => {
      const batch = Array.from({ length: to - from }, (_, k) => new Event({ type: "chaos.happened", data: { n: base + from + k }, key: `k${(from + k) % 12}` }));
      for (;;) {
        try {
          await bus.publish(topic, batch);
          published += to - from;
          return;
        } catch {
          retried++;
          await sleep(100);
        }
      }
    };
    for (let i = 0; i < head; i += 100) await publish(i, Math.min(head, i + 100));
    const t0 = Date.now();
    while ((await applied()) < head && Date.now() - t0 < 120_000) await sleep(10);
    const live = (async () => {
      for (let i = head; i < events - probe; i += LIVE_BATCH) {
        await publish(i, Math.min(events - probe, i + LIVE_BATCH));
        await sleep(LIVE_EVERY_MS);
      }
    })();
    while (published < head + (events - probe - head) / 2 && Date.now() - t0 < 120_000) await sleep(5);
    const before = await applied();
    const endedAt = await makeFault({ kafka, proxy, fault, live, notes: out.notes, problems: out.problems });
    out.notes[0] = `at ${before}/${events} events applied: ${out.notes[0]}`;
    await publish(events - probe, events);
    const probed = async () => (await db.query(`SELECT 1 FROM ${schema}.chaos_effects WHERE phase = 'finished' AND n >= $1 LIMIT 1`, [base + events - probe])).rows.length > 0;
    const deadline = Date.now() + Math.max(120_000, events * 60);
    while (!(await probed()) && Date.now() < deadline) await sleep(10);
    out.recoveryMs.push((await probed()) ? Date.now() - endedAt : Infinity);
    await live;
    while ((await applied()) < events && Date.now() < deadline) await sleep(25);
    // Stuck: what is left of the group's lag once every event is applied (its offsets commit after the effects).
    const settledBy = Date.now() + 20_000;
    let status = await bus.status();
    while (status.partitions.reduce((a, p) => a + p.lag, 0) > 0 && Date.now() < settledBy) {
      await sleep(500);
      status = await bus.status();
    }
    out.stuck = status.partitions.reduce((a, p) => a + p.lag, 0);
    // A straggler (a redelivery racing the last commit) gets a moment to show a duplicate.
    await sleep(3000);
    const c = await count();
    out.lost = events - c.distinct;
    out.duplicated = c.total - c.distinct;
    out.runsTwice = c.twice;
    const health = await bus.health();
    out.notes.push(`${retried} publish calls failed and were retried; consumer ${health.consumer}`);
    if (out.lost > 0) out.problems.push(`${out.lost} published events never applied`);
    if (out.duplicated > 0) out.problems.push(`${out.duplicated} events applied twice`);
    if (out.stuck > 0) out.problems.push(`the group's offsets ${out.stuck} behind the topic's end 20 s after the drain${status.error ? ` (${status.error})` : ""}`);
    if (health.consumer !== "running") out.problems.push(`the consumer did not resume: ${health.consumer}${health.error ? ` (${health.error})` : ""}`);
  } finally {
    proxy.setLatency(0);
    await jfast?.stop().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
  return out;
}

/** Makes the fault, notes what it hit; returns when it ended (the moment recovery is timed from). */
async function makeFault(params: { kafka: PrivateKafka; proxy: FaultProxy; fault: KafkaFault; live: Promise<void>; notes: string[]; problems: string[] }): Promise<number> {
  const { kafka, proxy, fault, notes } = params;
  const at = Date.now();
  if (fault === "engine") {
    await kafka.kill9(500);
    notes.push(`broker killed, down ${((Date.now() - at) / 1000).toFixed(1)} s`);
  } else if (fault === "latency") {
    proxy.setLatency(50);
    await params.live;
    proxy.setLatency(0);
    notes.push(`${proxy.connections} client connections delayed until the live events were published (${((Date.now() - at) / 1000).toFixed(1)} s)`);
  } else if (fault === "cut") {
    // A consumer caught up has a fetch (a long poll) on the wire nearly all the time.
    const { midStatement, cut } = await proxy.dropMidStatement();
    notes.push(`${cut} client connections reset, ${midStatement} with a request on the wire`);
    if (midStatement === 0) params.problems.push("no connection had a request on the wire when the connections were cut");
  } else if (fault === "blackhole") {
    const connections = proxy.connections;
    await proxy.blackHole((KAFKA_SESSION_TIMEOUT_S + 3) * 1000);
    notes.push(`${connections} client connections held ${KAFKA_SESSION_TIMEOUT_S + 3} s`);
  } else {
    notes.push(`${proxy.halfClose()} client connections half-closed`);
  }
  return Date.now();
}
