/**
 * Kafka: a broker of the run's own, killed with -9 while an `on` handler consumes a topic, and started again.
 * The handler applies each event inside a transaction guarded by the inbox (`claimOnce` on the event id), the
 * way docs/events.md has a consumer make its effects once: redeliveries after the crash (offsets not yet
 * committed) are counted as runs twice, effects must stay single, and every published event must be applied.
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
import type { BackendRun } from "./run-backend.js";

export async function runKafka(params: { events: number; runs: number }): Promise<BackendRun> {
  const problems: string[] = [];
  const scenarios: ScenarioResult[] = [];
  let kafka: PrivateKafka | null = null;
  const schema = `jfast_chaos_kafka_${randomBytes(4).toString("hex")}`;
  const db = new pg.Pool({ connectionString: services.postgres, max: 3 });
  db.on("error", () => undefined);
  try {
    kafka = await startPrivateKafka();
    await db.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.chaos_effects (n integer NOT NULL, phase text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    for (let run = 0; run < params.runs; run++) {
      const t = Date.now();
      const r = await killMidConsume({ kafka, db, schema, events: params.events });
      scenarios.push(r);
      console.log(`chaos: kafka / broker kill -9: lost ${r.lost}, duplicated ${r.duplicated}, runs twice ${r.runsTwice}, ${((Date.now() - t) / 1000).toFixed(1)} s${r.problems.length ? ` — ${r.problems.join("; ")}` : ""}`);
    }
  } catch (error) {
    problems.push(`the run itself failed: ${(error as Error).stack ?? error}`);
  } finally {
    await kafka?.destroy();
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.end().catch(() => undefined);
  }
  return { backend: "kafka", scenarios, extras: [], problems };
}

async function killMidConsume(params: { kafka: PrivateKafka; db: pg.Pool; schema: string; events: number }): Promise<ScenarioResult> {
  const { kafka, db, schema, events } = params;
  const id = randomBytes(4).toString("hex");
  const topic = `chaos.kafka.${id}`;
  const out: ScenarioResult = { backend: "kafka", scenario: "Kafka broker kill -9 mid-consume", jobs: events, lost: 0, duplicated: 0, runsTwice: 0, stuck: 0, recoveryMs: [], notes: [], problems: [], findings: [] };
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
    `[service]\nname = "chaos-kafka"\n[plugins]\nenabled = ["database", "events"]\n[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\n[plugin.events]\nconsumer_group = "chaos-${id}"\n`,
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
  try {
    jfast = await createJfast({ root, env: { KAFKA_BROKERS: kafka.brokers }, handlers: [handler], logger: createLogger({ service: "chaos-kafka", level: "error" }) });
    await jfast.start();
    const bus = jfast.require<EventsBus>("events");
    // Every event acknowledged by the broker before the kill: what was published must be applied.
    for (let i = 0; i < events; i += 100) {
      await bus.publish(topic, Array.from({ length: Math.min(100, events - i) }, (_, k) => new Event({ type: "chaos.happened", data: { n: base + i + k }, key: `k${(i + k) % 12}` })));
    }
    const t0 = Date.now();
    while ((await count()).distinct < events / 3 && Date.now() - t0 < 120_000) await sleep(10);
    const before = (await count()).distinct;
    const at = Date.now();
    await kafka.kill9(500);
    const upAt = Date.now();
    out.notes.push(`killed at ${before}/${events} events applied, down ${((upAt - at) / 1000).toFixed(1)} s`);
    const deadline = Date.now() + Math.max(120_000, events * 60);
    let seen = (await count()).distinct;
    let resumed: number | null = null;
    while (seen < events && Date.now() < deadline) {
      await sleep(25);
      const now = (await count()).distinct;
      if (resumed === null && now > seen) resumed = Date.now() - upAt;
      seen = now;
    }
    if (resumed === null && seen >= events) resumed = 0;
    out.recoveryMs.push(resumed ?? Infinity);
    await sleep(3000);
    const c = await count();
    out.lost = events - c.distinct;
    out.duplicated = c.total - c.distinct;
    out.runsTwice = c.twice;
    if (out.lost > 0) out.problems.push(`${out.lost} published events never applied`);
    if (out.duplicated > 0) out.problems.push(`${out.duplicated} events applied twice`);
  } finally {
    await jfast?.stop().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
  return out;
}
