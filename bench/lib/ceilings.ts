/** The services' own ceilings, measured with their own tools when they are installed (skipped, and said so, if not). */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import pg from "pg";
import { services } from "./subject.js";

const run = promisify(execFile);

/** pgbench running a claim-and-complete cycle on a one-column queue table (SKIP LOCKED), 10 clients, 10 s. */
export async function pgbenchCeiling(): Promise<string> {
  const table = `pgbench_queue_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: services.postgres });
  await client.connect();
  try {
    await client.query(`CREATE UNLOGGED TABLE ${table} (id bigserial PRIMARY KEY, done boolean NOT NULL DEFAULT false)`);
    await client.query(`INSERT INTO ${table} (done) SELECT false FROM generate_series(1, 2000000)`);
    await client.query(`CREATE INDEX ON ${table} (id) WHERE NOT done`);
    const script = `UPDATE ${table} SET done = true WHERE id = (SELECT id FROM ${table} WHERE NOT done ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED);`;
    const { writeFile, rm } = await import("node:fs/promises");
    const file = `/tmp/${table}.sql`;
    await writeFile(file, script);
    try {
      const { stdout } = await run("pgbench", ["-n", "-c", "10", "-j", "2", "-T", "10", "-f", file, services.postgres]);
      const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
      return tps ? `${Math.round(Number(tps))} claim+complete/s (pgbench, 10 clients, one statement per job, unlogged table)` : "pgbench gave no tps";
    } finally {
      await rm(file, { force: true });
    }
  } catch (error) {
    return `not measured (${(error as Error).message.split("\n")[0]})`;
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await client.end();
  }
}

/** redis-benchmark LPUSH/RPOP, pipeline 1 and 16. */
export async function redisCeiling(): Promise<string> {
  try {
    const url = new URL(services.redis);
    const out: string[] = [];
    for (const pipeline of ["1", "16"]) {
      const { stdout } = await run("redis-benchmark", ["-h", url.hostname, "-p", url.port || "6379", "-n", "100000", "-t", "lpush,rpop", "-P", pipeline, "-q"]);
      // -q still prints progress lines ending in \r; the result lines are the ones ending "requests per second".
      const results = stdout.split(/[\r\n]+/).filter((l) => /requests per second/.test(l) && !/rps=/.test(l));
      out.push(`P${pipeline}: ${results.map((l) => l.trim().replace(/\s+p50=.*$/, "").replace(/,$/, "")).join(", ")}`);
    }
    return `redis-benchmark ${out.join("; ")}`;
  } catch (error) {
    return `not measured (${(error as Error).message.split("\n")[0]})`;
  }
}
