/**
 * CPU time per job of one subject: steadier than jobs/s on a shared or noisy machine, and it splits the cost
 * between the Node process (this one: enqueuer and worker) and everything else on the machine (the database or
 * broker, the kernel). Each round enqueues BENCH_JOBS no-op jobs, then drains them at the given concurrency;
 * the figures cover the drain only, then the enqueue only.
 *
 *   npx tsx cpu-per-job.ts <subject> [concurrency=10] [rounds=5]
 *
 * Subjects are those of run-subject.ts. Run it on an otherwise idle machine: "rest of machine" counts every
 * process, so anything else running lands in it. BENCH_PROFILE=<file> also writes a V8 CPU profile of the
 * drains only (open it in Chrome's DevTools, Performance tab), without the start-up and the enqueues;
 * BENCH_PROFILE_PHASE=enqueue profiles the enqueues instead.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { cpus } from "node:os";
import { SUBJECTS } from "./subjects/index.js";
import { singleProcess } from "./lib/subject.js";

const name = process.argv[2] ?? "";
const concurrency = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 5);
const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const make = SUBJECTS[name];
if (!make) {
  console.error(`usage: npx tsx cpu-per-job.ts <${Object.keys(SUBJECTS).join("|")}> [concurrency] [rounds]`);
  process.exit(2);
}

/** Busy CPU time of the whole machine in µs (user + nice + system + irq + softirq + steal), from /proc/stat. */
function machineBusyUs(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields as number[];
  const hz = 100; // USER_HZ on Linux
  return ((user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 1e6) / hz;
}

async function measure(work: () => Promise<void>): Promise<{ wallMs: number; nodeUs: number; restUs: number }> {
  const m0 = machineBusyUs();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const nodeUs = c.user + c.system;
  return { wallMs, nodeUs, restUs: Math.max(0, machineBusyUs() - m0 - nodeUs) };
}

const profileTo = process.env.BENCH_PROFILE;
const inspector = profileTo ? new Session() : null;
if (inspector) {
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.setSamplingInterval", { interval: 200 });
}

/** Profiles one phase of every round but the first (start-up and JIT warm-up), when asked to. */
async function profiled<T>(phase: string, round: number, work: () => Promise<T>): Promise<T> {
  if (!inspector || round === 1 || (process.env.BENCH_PROFILE_PHASE ?? "drain") !== phase) return work();
  await inspector.post("Profiler.start");
  const result = await work();
  const { profile } = await inspector.post("Profiler.stop");
  writeFileSync(`${profileTo}.${round}.cpuprofile`, JSON.stringify(profile));
  return result;
}

const subject = make(singleProcess());
await subject.setup();
const rows: string[] = [];
const fmt = (n: number) => n.toFixed(1).padStart(6);
try {
  for (let r = 1; r <= rounds; r++) {
    const enq = await profiled("enqueue", r, () => measure(() => subject.enqueue(JOBS)));
    const drain = await profiled("drain", r, () => measure(() => subject.drain(JOBS, concurrency)));
    rows.push(
      `round ${r}: drain ${Math.round(JOBS / (drain.wallMs / 1000))} jobs/s, CPU/job node ${fmt(drain.nodeUs / JOBS)} µs, rest ${fmt(drain.restUs / JOBS)} µs` +
        ` | enqueue ${Math.round(JOBS / (enq.wallMs / 1000))} jobs/s, node ${fmt(enq.nodeUs / JOBS)} µs, rest ${fmt(enq.restUs / JOBS)} µs`,
    );
    console.log(rows.at(-1));
  }
} finally {
  await subject.teardown();
}
console.log(`${name} c=${concurrency}, ${JOBS} jobs per round, ${cpus().length} cores`);
process.exit(0);
