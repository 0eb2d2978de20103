/**
 * The PostgreSQL bulk enqueue against its ceiling on the same server: jfast's `queue.enqueue` of 5 000 new jobs
 * a call (as the bench's subject), and the same INSERT statement (enqueue.sql's first-hand-off form, prepared)
 * sent by a bare node-postgres client with every parameter built beforehand, in the same 1 000-row slices and one
 * transaction per 5 000 rows, pipelined as jfast pipelines them. The ceiling is what the server takes for those
 * rows with no client work at all; jfast's share of it is the part of the time its own process adds. Per round
 * and side: jobs/s, and the CPU of this process and of the ceiling's own server backend (/proc, Linux only)
 * per 1 000 rows. Rounds alternate.
 *
 *   npx tsx pg-enqueue-ceiling.ts            (CEILING_JOBS=20000, CEILING_ROUNDS=5, DATABASE_URL)
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import pg from "pg";
import { Job } from "@jfast/runtime";
import { jobsToColumns } from "../packages/runtime/dist/backends/postgres/job-rows.js";
import { SQL } from "../packages/runtime/dist/backends/postgres/load-sql.js";
import { SUBJECTS } from "./subjects/index.js";
import { median } from "./lib/stats.js";
import { services, singleProcess } from "./lib/subject.js";

const JOBS = Number(process.env.CEILING_JOBS ?? 20_000);
const ROUNDS = Number(process.env.CEILING_ROUNDS ?? 5);
const CALL = 5000;
const SLICE = 1000;

const subject = SUBJECTS["jfast-postgres"]!(singleProcess());
await subject.setup();
const client = new pg.Client({ connectionString: services.postgres });
await client.connect();
const { rows: [found] } = await client.query<{ schema: string }>("SELECT nspname AS schema FROM pg_namespace WHERE nspname LIKE 'jfast_bench_%' ORDER BY oid DESC LIMIT 1");
await client.query(`SET search_path = ${found!.schema}`);
const { rows: [me] } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
const backendMs = () => {
  const stat = readFileSync(`/proc/${me!.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** The statement alone: parameters built before the clock starts, one transaction per 5 000 rows. */
async function ceiling(): Promise<{ rate: number; clientMs: number; serverMs: number }> {
  const calls: unknown[][][] = [];
  for (let i = 0; i < JOBS; i += CALL) {
    const slices: unknown[][] = [];
    for (let j = i; j < Math.min(i + CALL, JOBS); j += SLICE) {
      slices.push(["bench", ...jobsToColumns(Array.from({ length: Math.min(SLICE, JOBS - j) }, () => new Job({ task: "bench.noop" })))]);
    }
    calls.push(slices);
  }
  const s0 = backendMs();
  const c0 = cpuMs();
  const t0 = performance.now();
  for (const slices of calls) {
    await client.query("BEGIN");
    // Sent back to back: node-postgres queues them on the connection, the server runs them in turn.
    await Promise.all(slices.map((values) => client.query({ name: "ceiling_enqueue", text: SQL.enqueueFresh, values })));
    await client.query("COMMIT");
  }
  const seconds = (performance.now() - t0) / 1000;
  return { rate: JOBS / seconds, clientMs: cpuMs() - c0, serverMs: backendMs() - s0 };
}

async function viaJfast(): Promise<{ rate: number; clientMs: number }> {
  const c0 = cpuMs();
  const t0 = performance.now();
  await subject.enqueue(JOBS);
  const seconds = (performance.now() - t0) / 1000;
  return { rate: JOBS / seconds, clientMs: cpuMs() - c0 };
}

const rows = { ceiling: [] as number[], jfast: [] as number[], ceilingServer: [] as number[], jfastClient: [] as number[] };
try {
  for (let round = 1; round <= ROUNDS; round++) {
    await client.query("TRUNCATE jfast_jobs");
    const c = await ceiling();
    await client.query("TRUNCATE jfast_jobs");
    const j = await viaJfast();
    rows.ceiling.push(c.rate);
    rows.jfast.push(j.rate);
    rows.ceilingServer.push(c.serverMs / (JOBS / 1000));
    rows.jfastClient.push(j.clientMs / (JOBS / 1000));
    console.log(
      `round ${round}: ceiling ${c.rate.toFixed(0)} rows/s (server backend ${(c.serverMs / (JOBS / 1000)).toFixed(1)} ms/1k rows)` +
        ` | jfast ${j.rate.toFixed(0)} jobs/s (this process ${(j.clientMs / (JOBS / 1000)).toFixed(1)} ms/1k jobs, new Job included) | share ${(j.rate / c.rate).toFixed(2)}`,
    );
  }
} finally {
  await client.query("TRUNCATE jfast_jobs").catch(() => undefined);
  await client.end();
  await subject.teardown();
}
const share = median(rows.jfast) / median(rows.ceiling);
console.log(
  `${JOBS} rows, ${CALL} a transaction in ${SLICE}-row statements, median of ${ROUNDS} (Node ${process.versions.node}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}):` +
    ` ceiling ${median(rows.ceiling).toFixed(0)} rows/s, server ${median(rows.ceilingServer).toFixed(1)} ms/1k; jfast ${median(rows.jfast).toFixed(0)} jobs/s, client ${median(rows.jfastClient).toFixed(1)} ms/1k; share ${share.toFixed(2)}`,
);
process.exit(0);
