/**
 * What the PostgreSQL queue's depths cost with a large backlog (docs/postgres.md#a-large-backlog-exact-up-to-50-000-estimated-beyond):
 *
 *   npx tsx backlog/depths-count.ts [--rows 1000000] [--before <git ref>]
 *
 * A schema of its own in BENCH_POSTGRES_URL (default the tests' database) with `--rows` ready jobs and 1 000
 * scheduled ones written by SQL, then depths() and the depths per task timed in process, a warm-up and 5 calls each
 * (median), first with the pages as written (not yet vacuumed) and then after VACUUM (ANALYZE). With `--before`, the
 * statements depths.sql and depths-by-task.sql of that commit run beside them on the same table (with the
 * parameters they took then: the queue and 1 000 due rows read; for the split, also 10 000 rows per state). The
 * schema is dropped at the end.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createJfast, Job, task, type DatabaseProvider, type QueueProvider } from "@jfast/runtime";
import { median } from "../lib/stats.js";

const { values } = parseArgs({ options: { rows: { type: "string", default: "1000000" }, before: { type: "string" } } });
const ROWS = Number(values.rows);
const url = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `jfast_depths_${process.pid}`;
const root = await mkdtemp(path.join(tmpdir(), "jfast-depths-"));
await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "depths"\n\n[plugins]\nenabled = ["database", "queue"]\n\n[plugin.database]\nurl = "${url}"\nschema = "${schema}"\n\n[plugin.queue]\nbackend = "postgres"\n`);
const silent = { debug() {}, info() {}, warn() {}, error: console.error, child: () => silent };
const jfast = await createJfast({ root, env: {}, tasks: [task("depths.a", async () => {}), task("depths.b", async () => {})], logger: silent as never });
await jfast.start();
const queue = jfast.require<QueueProvider>("queue");
const database = jfast.require<DatabaseProvider>("database");
const sqlOf = (ref: string, name: string) =>
  execFileSync("git", ["show", `${ref}:packages/runtime/src/backends/postgres/sql/${name}.sql`], { encoding: "utf8" });

async function time(label: string, call: () => Promise<unknown>): Promise<void> {
  await call();
  const ms: number[] = [];
  let out: unknown;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    out = await call();
    ms.push(performance.now() - t);
  }
  console.log(`| ${label} | ${median(ms).toFixed(1)} ms | ${JSON.stringify(out).slice(0, 160)} |`);
}

try {
  await queue.enqueue(new Job({ task: "depths.a" }));
  const [{ queue: name }] = (await database.sql.query<{ queue: string }>("SELECT queue FROM jfast_jobs LIMIT 1")) as [{ queue: string }];
  await database.sql.query(
    `INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
     SELECT 'r-' || g, $1, CASE WHEN g % 3 = 2 THEN 'depths.b' ELSE 'depths.a' END, '{}', 'ready', 3, now() - interval '1 hour' + g * interval '1 microsecond'
     FROM generate_series(1, $2::integer) g`,
    [name, ROWS - 1],
  );
  await database.sql.query(
    `INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at)
     SELECT 's-' || g, $1, 'depths.a', '{}', 'ready', 3, now() + interval '1 day' FROM generate_series(1, 1000) g`,
    [name],
  );
  console.log(`${ROWS} ready and 1 000 scheduled jobs in ${schema}.jfast_jobs (queue ${name})\n`);
  for (const phase of ["as written", "after VACUUM (ANALYZE)"]) {
    if (phase !== "as written") await database.sql.query("VACUUM (ANALYZE) jfast_jobs");
    console.log(`| ${phase} | median of 5 | result |\n|---|---:|---|`);
    if (values.before) await time(`depths.sql of ${values.before}`, () => database.sql.query(sqlOf(values.before!, "depths"), [name, 1000]));
    await time("depths()", () => queue.backend.depths());
    if (values.before) await time(`depths-by-task.sql of ${values.before}`, () => database.sql.query(sqlOf(values.before!, "depths-by-task"), [name, null, 10_000, 1000]));
    await time("depthsByTask()", () => queue.backend.depthsByTask());
    console.log("");
  }
} finally {
  await database.sql.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
  await jfast.stop();
  await rm(root, { recursive: true, force: true });
}
