import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast stats` as a separate process against the PostgreSQL server on 127.0.0.1:5432, in a schema of its own.
const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe("jfast stats", () => {
  it("prints each task's counts and run/wait percentiles from what the workers stored, as a table and as JSON", { timeout: 180_000 }, async () => {
    const schema = `jfast_cli_${randomUUID().slice(0, 8)}`;
    const { root, remove } = await createServiceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\n`,
      "modules/mail/tasks.ts": `import { task } from "@jfast/runtime";\nexport const send = task("mail.send", async () => undefined);\n`,
    });
    cleanups.push(remove, async () => void (await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)));
    // A job due now: the queue's oldest waiting job, and the schema migrated.
    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", "--root", root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const queue = (await sql<{ queue: string }>(`SELECT queue FROM "${schema}".jfast_jobs LIMIT 1`))[0]!.queue;
    // What two workers flushed this minute: 8 attempts of 100-ish ms and 2 of about 2 s (buckets 27 and 44), waits of ~10 ms (bucket 14).
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    await sql(
      `INSERT INTO "${schema}".jfast_stats (queue, span, at, task, processed, failed, dead, run_ms, wait_ms) VALUES ($1, 1, $2, 'mail.send', 9, 2, 1, '{"27": 8, "44": 2}', '{"14": 10}')`,
      [queue, minute],
    );

    const json = await runJfast(["stats", "--json", "--root", root]);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(rows).toEqual([
      { task: "mail.send", completed: 9, failed: 2, dead: 1, runMs: { p50: 98.7, p95: 1878, p99: 1878 }, waitMs: { p50: 10.4, p95: 10.4, p99: 10.4 }, queue: "default" },
    ]);
    const table = await runJfast(["stats", "--task", "mail.send", "--since", "24h", "--root", root]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/TASK\s+COMPLETED\s+FAILED\s+DEAD\s+RUN p50\/p95\/p99/);
    expect(table.stdout).toMatch(/mail\.send\s+9\s+2\s+1\s+99ms \/ 1\.9s \/ 1\.9s/);
    expect(table.stdout).toMatch(/OLDEST WAITING/);
    const none = await runJfast(["stats", "--task", "mail.other", "--root", root]);
    expect(none.stdout).toContain("no attempts recorded in the last 1h");
    const bad = await runJfast(["stats", "--since", "9d", "--root", root]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--since");
  });
});
