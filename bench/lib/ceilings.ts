/**
 * The services' own figures, measured with their own tools when they are installed (skipped, and said so, if
 * not). Each line comes out as the report prints it, with what it is a reference for.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import pg from "pg";
import { services } from "./subject.js";

const run = promisify(execFile);
const CLIENTS = 10;
const BATCH = 100;
const ROWS = 2_000_000;

/**
 * pgbench claiming and completing jobs of a one-column queue table (SKIP LOCKED, an unlogged table), 10 clients:
 * one job per statement for 10 s, then 100 per statement. Neither is a ceiling for a queue that batches its
 * claims and completions (jfast, graphile-worker and pg-boss do): the first is what a queue that does not
 * batch could reach, the second what one statement per 100 jobs costs the server.
 */
export async function pgbenchReferences(): Promise<string[]> {
  const table = `pgbench_queue_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: services.postgres });
  const file = `/tmp/${table}.sql`;
  const pick = (limit: number) => `SELECT id FROM ${table} WHERE NOT done ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
  const single = `UPDATE ${table} SET done = true WHERE id = (${pick(1)});`;
  const batch = `UPDATE ${table} SET done = true WHERE id = ANY (ARRAY(${pick(BATCH)}));`;
  const pgbench = async (script: string, length: string[]) => {
    await writeFile(file, script);
    const { stdout } = await run("pgbench", ["-n", "-c", String(CLIENTS), "-j", "2", ...length, "-f", file, services.postgres]);
    const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
    if (!tps) throw new Error("pgbench gave no tps");
    return Number(tps);
  };
  await client.connect();
  try {
    await client.query(`CREATE UNLOGGED TABLE ${table} (id bigserial PRIMARY KEY, done boolean NOT NULL DEFAULT false)`);
    await client.query(`INSERT INTO ${table} (done) SELECT false FROM generate_series(1, ${ROWS})`);
    await client.query(`CREATE INDEX ON ${table} (id) WHERE NOT done`);
    const perJob = await pgbench(single, ["-T", "10"]);
    // A fixed number of statements per client, within the rows left: past them a claim would find nothing
    // and count as a transaction all the same.
    await client.query(`VACUUM ANALYZE ${table}`);
    const left = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE NOT done`)).rows[0]!.n);
    const perClient = Math.min(1000, Math.floor((left * 0.9) / (CLIENTS * BATCH)));
    const batched = await pgbench(batch, ["-t", String(perClient)]);
    return [
      `reference, not a ceiling: ${Math.round(perJob)} claim+complete/s (pgbench, ${CLIENTS} clients, one claim+complete statement per job, unbatched, unlogged table)`,
      `reference, batched: ${Math.round(batched * BATCH)} jobs/s (the same with ${BATCH} jobs claimed and completed per statement, ${perClient} statements per client)`,
    ];
  } catch (error) {
    return [`pgbench reference not measured (${(error as Error).message.split("\n")[0]})`];
  } finally {
    await rm(file, { force: true });
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await client.end();
  }
}

/** redis-benchmark LPUSH/RPOP, pipeline 1 and 16, on the shared Redis (without persistence). */
export async function redisReferences(): Promise<string[]> {
  try {
    const url = new URL(services.redis);
    const out: string[] = [];
    for (const pipeline of ["1", "16"]) {
      const { stdout } = await run("redis-benchmark", ["-h", url.hostname, "-p", url.port || "6379", "-n", "100000", "-t", "lpush,rpop", "-P", pipeline, "-q"]);
      // -q still prints progress lines ending in \r; the result lines are the ones ending "requests per second".
      const results = stdout.split(/[\r\n]+/).filter((l) => /requests per second/.test(l) && !/rps=/.test(l));
      out.push(`P${pipeline}: ${results.map((l) => l.trim().replace(/\s+p50=.*$/, "").replace(/,$/, "")).join(", ")}`);
    }
    return [`ceiling: redis-benchmark on the shared Redis ${out.join("; ")}`];
  } catch (error) {
    return [`ceiling: not measured (${(error as Error).message.split("\n")[0]})`];
  }
}
