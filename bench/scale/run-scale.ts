/**
 * The scaling benchmark (`npm run bench:scale`): 1, 2, 4 and 8 worker processes on one PostgreSQL, one Redis
 * and one RabbitMQ, each step draining a backlog of no-op jobs and one of 5 ms jobs enqueued beforehand.
 * Per step: throughput from "go" to an empty queue, how many handlers ran (duplicates show as more than the
 * backlog), and what the server shows while it drains — on PostgreSQL the jfast connections waiting on a lock
 * (pg_stat_activity) and the ungranted locks (pg_locks), sampled every 100 ms; on Redis the server's CPU
 * seconds. On both, the CPU the server's processes (every `postgres` or `redis-server` process), the worker
 * processes and the whole machine spent during the drain, read from /proc: in % of one core, so the machine's
 * ceiling is 100 % × its cores. Writes bench/results/scale.json and the generated part of SCALING.md.
 *
 *   SCALE_NOOP (200000), SCALE_SLOW (20000), SCALE_STEPS (1,2,4,8), SCALE_BACKENDS (postgres,redis,rabbitmq),
 *   SCALE_CONCURRENCY (10, per process)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import pg from "pg";
import { createJfast, Job, task, type QueueProvider } from "@jfast/runtime";
import { dropJfastAmqpQueue, dropRedisKeys } from "../lib/cleanup.js";
import { machineCpuMs, processCpuMs, serverCpuMs } from "../lib/server-cpu.js";
import { services } from "../lib/subject.js";

type Backend = "postgres" | "redis" | "rabbitmq";
type Workload = "noop" | "sleep5";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const list = (value: string | undefined, fallback: string) => (value ?? fallback).split(",").map((s) => s.trim()).filter(Boolean);
const NOOP = Number(process.env.SCALE_NOOP ?? 200_000);
const SLOW = Number(process.env.SCALE_SLOW ?? 20_000);
const STEPS = list(process.env.SCALE_STEPS, "1,2,4,8").map(Number);
const BACKENDS = list(process.env.SCALE_BACKENDS, "postgres,redis,rabbitmq") as Backend[];
const CONCURRENCY = Number(process.env.SCALE_CONCURRENCY ?? 10);
const CHUNK = 5000;

export interface StepResult {
  backend: Backend;
  workload: Workload;
  workers: number;
  jobs: number;
  ran: number;
  seconds: number;
  jobsPerSecond: number;
  /** PostgreSQL: jfast connections waiting on a heavyweight lock (pg_stat_activity), max and mean of the samples. */
  lockWaitsMax?: number;
  lockWaitsMean?: number;
  /** PostgreSQL: ungranted locks in pg_locks, max of the samples. */
  ungrantedMax?: number;
  /** PostgreSQL: the jfast connections' wait events seen while draining (sample counts). */
  waitEvents?: Record<string, number>;
  /** Redis: the server's CPU seconds during the drain. */
  serverCpuSeconds?: number;
  /** The server's processes (every `postgres` or `redis-server`), the worker processes and the machine, % of one core. */
  serverCpuPct?: number;
  workersCpuPct?: number;
  machineBusyPct?: number;
  loadBefore: number;
}

const silent = { debug() {}, info() {}, warn() {}, error: console.error };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function toml(backend: Backend, schema: string, queue: string): string {
  const plugins = backend === "postgres" ? `"database", "queue"` : `"queue"`;
  const url = backend === "redis" ? services.redis : backend === "rabbitmq" ? services.amqp : null;
  return [
    `[service]\nname = "scale"`,
    `[plugins]\nenabled = [${plugins}]`,
    backend === "postgres" ? `[plugin.database]\nurl = "${services.postgres}"\nschema = "${schema}"\npool_size = 12` : "",
    `[plugin.queue]\nbackend = "${backend}"\nname = "${queue}"\nconcurrency = ${CONCURRENCY}\npoll_interval = 1${url ? `\nurl = "${url}"` : ""}${backend === "postgres" ? "\nkeep_completed = false" : ""}`,
  ].join("\n\n");
}

interface Child {
  process: ChildProcess;
  /** Handlers run so far, as the worker last reported. */
  progress: number;
  final: Promise<number>;
}

async function startWorker(root: string): Promise<Child> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(HERE, "worker.ts"), root, String(CONCURRENCY)], {
    stdio: ["pipe", "pipe", "inherit"],
    cwd: path.join(HERE, ".."),
  });
  const lines = createInterface({ input: child.stdout! });
  let ready!: () => void;
  let finished!: (ran: number) => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const handle: Child = { process: child, progress: 0, final: new Promise<number>((resolve) => (finished = resolve)) };
  lines.on("line", (line) => {
    if (line === "ready") return ready();
    const message = JSON.parse(line) as { progress?: number; ran?: number };
    if (message.progress !== undefined) handle.progress = message.progress;
    if (message.ran !== undefined) finished(message.ran);
  });
  child.once("exit", (code) => code !== 0 && finished(handle.progress));
  await started;
  return handle;
}

async function stopWorker(child: Child): Promise<number> {
  child.process.stdin!.write("stop\n");
  return child.final;
}

/** Samples what the server shows while a step drains; stop() returns the summary. */
function sampler(backend: Backend, schema: string): { stop(): Promise<Partial<StepResult>> } {
  let running = true;
  const done = (async (): Promise<Partial<StepResult>> => {
    if (backend === "postgres") {
      const client = new pg.Client({ connectionString: services.postgres });
      await client.connect();
      const waits: number[] = [];
      let ungrantedMax = 0;
      const events: Record<string, number> = {};
      try {
        while (running) {
          const { rows } = await client.query<{ waiting: string; ungranted: string; events: Record<string, number> | null }>(
            `SELECT (SELECT count(*) FROM pg_stat_activity WHERE application_name = 'jfast' AND wait_event_type = 'Lock') AS waiting,
                    (SELECT count(*) FROM pg_locks WHERE NOT granted) AS ungranted,
                    (SELECT jsonb_object_agg(e, n) FROM (SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU') AS e, count(*) AS n
                       FROM pg_stat_activity WHERE application_name = 'jfast' AND state = 'active' GROUP BY 1) s) AS events`,
          );
          waits.push(Number(rows[0]!.waiting));
          ungrantedMax = Math.max(ungrantedMax, Number(rows[0]!.ungranted));
          for (const [event, n] of Object.entries(rows[0]!.events ?? {})) events[event] = (events[event] ?? 0) + Number(n);
          await sleep(100);
        }
      } finally {
        await client.end();
      }
      void schema;
      return {
        lockWaitsMax: Math.max(0, ...waits),
        lockWaitsMean: waits.length ? Math.round((waits.reduce((a, b) => a + b, 0) / waits.length) * 100) / 100 : 0,
        ungrantedMax,
        waitEvents: events,
      };
    }
    if (backend === "redis") {
      const redis = new Redis(services.redis);
      const cpu = async () => {
        const info = await redis.info("cpu");
        const get = (key: string) => Number(info.match(new RegExp(`^${key}:([\\d.]+)`, "m"))?.[1] ?? 0);
        return get("used_cpu_sys") + get("used_cpu_user");
      };
      const before = await cpu();
      while (running) await sleep(100);
      const after = await cpu();
      redis.disconnect();
      return { serverCpuSeconds: Math.round((after - before) * 100) / 100 };
    }
    while (running) await sleep(100);
    return {};
  })();
  return {
    async stop() {
      running = false;
      return done;
    },
  };
}

async function step(backend: Backend, workload: Workload, workers: number): Promise<StepResult> {
  const id = randomBytes(4).toString("hex");
  const schema = `jfast_scale_${id}`;
  const queueName = `scale.${id}`;
  const root = await mkdtemp(path.join(tmpdir(), "jfast-scale-"));
  await writeFile(path.join(root, "jfast.toml"), toml(backend, schema, queueName));
  const jobs = workload === "noop" ? NOOP : SLOW;
  const taskName = workload === "noop" ? "scale.noop" : "scale.sleep5";
  const enqueuer = await createJfast({
    root,
    env: {},
    tasks: [task("scale.noop", async () => {}), task("scale.sleep5", async () => {})],
    logger: silent as never,
  });
  await enqueuer.start();
  const children: Child[] = [];
  try {
    const queue = enqueuer.require<QueueProvider>("queue");
    for (let i = 0; i < jobs; i += CHUNK) {
      await queue.enqueue(Array.from({ length: Math.min(CHUNK, jobs - i) }, () => new Job({ task: taskName })));
    }
    for (let i = 0; i < workers; i++) children.push(await startWorker(root));
    const loadBefore = Math.round(loadavg()[0]! * 100) / 100;
    const watch = sampler(backend, schema);
    const comm = backend === "postgres" ? "postgres" : backend === "redis" ? "redis-server" : "beam.smp";
    const cpu = async () => ({
      server: await serverCpuMs(comm),
      workers: (await Promise.all(children.map((c) => processCpuMs(c.process.pid!)))).reduce((a, b) => a + b, 0),
      machine: await machineCpuMs(),
    });
    const cpu0 = await cpu();
    const t0 = performance.now();
    for (const child of children) child.process.stdin!.write("go\n");
    // Done: every job's handler ran (the workers' own counts; a broker does not see other consumers' unacked
    // messages), and the queue has nothing ready, scheduled or running left.
    for (;;) {
      if (children.reduce((sum, c) => sum + c.progress, 0) >= jobs) {
        const d = await queue.depths();
        if (d.ready + d.scheduled + d.running === 0) break;
      }
      await sleep(20);
    }
    let ranSoFar = 0;
    const seconds = (performance.now() - t0) / 1000;
    const cpu1 = await cpu();
    const pct = (ms: number) => Math.round(ms / 10 / seconds);
    const observed = await watch.stop();
    for (const child of children.splice(0)) ranSoFar += await stopWorker(child);
    const result: StepResult = {
      backend,
      workload,
      workers,
      jobs,
      ran: ranSoFar,
      seconds: Math.round(seconds * 100) / 100,
      jobsPerSecond: Math.round(jobs / seconds),
      ...observed,
      serverCpuPct: pct(cpu1.server - cpu0.server),
      workersCpuPct: pct(cpu1.workers - cpu0.workers),
      // Busy share of all cores, as % of one core (a 2-core machine tops out at 200 %).
      machineBusyPct: Math.round(((cpu1.machine.busy - cpu0.machine.busy) / (cpu1.machine.total - cpu0.machine.total)) * cpus().length * 100),
      loadBefore,
    };
    return result;
  } finally {
    for (const child of children) child.process.kill("SIGKILL");
    await enqueuer.stop();
    await rm(root, { recursive: true, force: true });
    if (backend === "postgres") {
      const client = new pg.Client({ connectionString: services.postgres });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    } else if (backend === "redis") {
      await dropRedisKeys(`*${queueName}*`);
    } else {
      await dropJfastAmqpQueue(queueName).catch(() => undefined);
    }
  }
}

const BEGIN = "<!-- scale:begin: written by `npm run bench:scale` (bench/scale/run-scale.ts); do not edit by hand -->";
const END = "<!-- scale:end -->";

function table(results: StepResult[], backend: Backend, workload: Workload): string {
  const rows = results.filter((r) => r.backend === backend && r.workload === workload);
  if (rows.length === 0) return "";
  const base = rows.find((r) => r.workers === 1)?.jobsPerSecond ?? rows[0]!.jobsPerSecond;
  const pgCols = backend === "postgres";
  const head = ["workers", "jobs/s", "vs 1 worker", "seconds", "handlers ran"];
  if (pgCols) head.push("lock waits max / mean", "ungranted locks max", "top wait events");
  if (backend === "redis") head.push("Redis CPU s");
  head.push(`${backend === "postgres" ? "PostgreSQL" : backend === "redis" ? "Redis" : "RabbitMQ"} CPU`, "workers' CPU", "machine busy", "load before");
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---:").join("|")}|`];
  for (const r of rows) {
    const cells = [String(r.workers), r.jobsPerSecond.toLocaleString("en-US"), `${(r.jobsPerSecond / base).toFixed(2)}×`, r.seconds.toFixed(1), `${r.ran.toLocaleString("en-US")} of ${r.jobs.toLocaleString("en-US")}`];
    if (pgCols) {
      const top = Object.entries(r.waitEvents ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([e, n]) => `${e} ${n}`).join(", ");
      cells.push(`${r.lockWaitsMax ?? 0} / ${r.lockWaitsMean ?? 0}`, String(r.ungrantedMax ?? 0), top || "none");
    }
    if (backend === "redis") cells.push(String(r.serverCpuSeconds ?? 0));
    cells.push(`${r.serverCpuPct ?? "—"} %`, `${r.workersCpuPct ?? "—"} %`, `${r.machineBusyPct ?? "—"} %`, String(r.loadBefore));
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

function knee(results: StepResult[], backend: Backend, workload: Workload): string {
  const rows = results.filter((r) => r.backend === backend && r.workload === workload).sort((a, b) => a.workers - b.workers);
  let best = rows[0];
  for (const r of rows) if (best && r.jobsPerSecond > best.jobsPerSecond * 1.1) best = r;
  return best ? `${best.workers} worker process${best.workers === 1 ? "" : "es"}` : "n/a";
}

export function markdown(results: StepResult[], when: string): string {
  const parts = [
    BEGIN,
    "## Worker processes on one server",
    "",
    `Generated on ${when} on this machine (${cpus().length} cores): ${NOOP.toLocaleString("en-US")} no-op jobs and ${SLOW.toLocaleString("en-US")} jobs of 5 ms per step, enqueued before the`,
    `workers start; each worker process runs concurrency ${CONCURRENCY}; throughput from the workers' start to an empty queue.`,
    "*Handlers ran* above the backlog would be duplicates. *Load before* is the machine's 1-minute load average when",
    "the step started: on a shared machine it says how much of the figure is someone else's. The CPU columns are the",
    "server's processes, the worker processes and the whole machine during the drain, in % of one core (from /proc;",
    `the machine's ceiling is ${cpus().length * 100} %); the server's figure counts every process of that name, other users' included.`,
    "",
  ];
  for (const backend of BACKENDS) {
    for (const workload of ["noop", "sleep5"] as const) {
      const t = table(results, backend, workload);
      if (!t) continue;
      parts.push(`### ${backend}: ${workload === "noop" ? "no-op jobs" : "5 ms jobs"}`, "", t, "", `Throughput stops growing by more than 10 % past ${knee(results, backend, workload)}.`, "");
    }
  }
  parts.push(END);
  return parts.join("\n");
}

async function main(): Promise<void> {
  const results: StepResult[] = [];
  for (const backend of BACKENDS) {
    for (const workload of ["noop", "sleep5"] as const) {
      for (const workers of STEPS) {
        const result = await step(backend, workload, workers);
        console.log(JSON.stringify(result));
        results.push(result);
      }
    }
  }
  const when = new Date().toISOString();
  await mkdir(path.join(HERE, "../results"), { recursive: true });
  await writeFile(path.join(HERE, "../results/scale.json"), `${JSON.stringify({ when, results }, null, 2)}\n`);
  const target = path.join(HERE, "../../SCALING.md");
  const current = await readFile(target, "utf8");
  const generated = markdown(results, when);
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next = start >= 0 && end > start ? current.slice(0, start) + generated + current.slice(end + END.length) : `${current.trimEnd()}\n\n${generated}\n`;
  await writeFile(target, next);
  console.log(`SCALING.md: ${results.length} steps written`);
}

await main();
