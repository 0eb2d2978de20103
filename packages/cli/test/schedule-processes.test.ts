import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, startJfast, type JfastProcess } from "./jfast-process.js";

/** The real PostgreSQL the tests run against; a missing server fails them, it never skips them. */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

let processes: JfastProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const p of processes) p.child.kill("SIGKILL");
  processes = [];
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function sql<T>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

describe("the scheduler in two jfast worker processes", () => {
  it("enqueues and runs each tick exactly once across both", async () => {
    const schema = `t_sched_procs_${randomUUID().replaceAll("-", "").slice(0, 10)}`;
    cleanups.push(async () => void (await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    const service = await createServiceRoot({
      "jfast.toml": `[service]\nname = "rates"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${DATABASE_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\nscheduler = true\npoll_interval = 0.2\n`,
      "modules/rates/tasks.ts": `
import { task } from "@jfast/runtime";
export const refresh = task("rates.refresh", { every: { seconds: 1 } }, async (payload: { scheduled_for: string }) => {
  process.stdout.write("ran " + payload.scheduled_for + "\\n");
});
`,
    });
    cleanups.push(service.remove);
    processes = [0, 1].map(() => startJfast(["worker", "--root", service.root]));
    for (const p of processes) await p.waitFor('"msg":"scheduler started"');
    const ran = () => processes.flatMap((p) => [...p.stdout.matchAll(/^ran (\S+)$/gm)].map((m) => m[1]!));
    await expect.poll(() => ran().length, { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(5);
    for (const p of processes) p.child.kill("SIGTERM");
    const exits = await Promise.all(processes.map((p) => p.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0]);

    const ticks = ran().sort();
    expect(new Set(ticks).size).toBe(ticks.length);
    for (let i = 1; i < ticks.length; i++) expect(Date.parse(ticks[i]!) - Date.parse(ticks[i - 1]!)).toBe(1000);
    const [counts] = await sql<{ claims: number; jobs: number; distinct_ticks: number }>(
      `SELECT (SELECT count(*)::integer FROM "${schema}".jfast_schedules WHERE name = 'rates.refresh') AS claims,
              (SELECT count(*)::integer FROM "${schema}".jfast_jobs WHERE task = 'rates.refresh') AS jobs,
              (SELECT count(DISTINCT payload->>'scheduled_for')::integer FROM "${schema}".jfast_jobs WHERE task = 'rates.refresh') AS distinct_ticks`,
    );
    // Every claimed tick has exactly one job; jobs enqueued after the last run may still be waiting.
    expect(counts!.jobs).toBe(counts!.claims);
    expect(counts!.distinct_ticks).toBe(counts!.jobs);
    expect(counts!.jobs).toBeGreaterThanOrEqual(ticks.length);
  });
});
