/**
 * CPU time per job of one subject: steadier than jobs/s on a shared or noisy machine, and it splits the cost
 * between the Node process (this one: enqueuer and worker) and everything else on the machine (the database or
 * broker, the kernel). Each round enqueues BENCH_JOBS no-op jobs, then drains them at the given concurrency;
 * the figures cover the drain only, then the enqueue only. In brackets, the server's own share of "rest": every
 * process named as the server (beam.smp, redis-server, postgres), so other clients of the same server count too.
 * Then the socket writes (system calls) and bytes this process sent per job, and (a second line) how the Node
 * process's CPU split between its threads: the main thread, V8's helpers, the heartbeat thread.
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
import { Socket } from "node:net";
import { SUBJECTS } from "./subjects/index.js";
import { singleProcess } from "./lib/subject.js";
import { serverCpuMs, threadCpuBetween, threadCpuMs } from "./lib/server-cpu.js";

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

/**
 * Writes this process hands its sockets (each a write or writev system call, corked chunks counting once) and
 * their bytes, counted at net.Socket's own writer: what a job costs in messages to the server.
 */
const written = { writes: 0, bytes: 0 };
{
  const proto = Socket.prototype as unknown as { _writeGeneric: (writev: boolean, data: unknown, ...rest: unknown[]) => unknown };
  const original = proto._writeGeneric;
  proto._writeGeneric = function (this: unknown, writev: boolean, data: unknown, ...rest: unknown[]) {
    written.writes++;
    const size = (chunk: unknown) => (typeof chunk === "string" ? Buffer.byteLength(chunk) : (chunk as Uint8Array).byteLength);
    written.bytes += writev ? (data as Array<{ chunk: unknown }>).reduce((sum, c) => sum + size(c.chunk), 0) : size(data);
    return original.call(this, writev, data, ...rest);
  };
}

/** The server's processes by name (every PostgreSQL backend is added): its share of "rest of machine". */
const serverComm = name.includes("rabbitmq") || name.startsWith("amqplib") ? "beam.smp" : name.includes("redis") || name.startsWith("bullmq") ? "redis-server" : "postgres";

async function measure(work: () => Promise<void>): Promise<{ wallMs: number; nodeUs: number; restUs: number; serverUs: number; writes: number; bytes: number; threads: Array<[string, number]> }> {
  const s0 = await serverCpuMs(serverComm);
  const w0 = { ...written };
  const m0 = machineBusyUs();
  const th0 = threadCpuMs();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const th1 = threadCpuMs();
  const nodeUs = c.user + c.system;
  const restUs = Math.max(0, machineBusyUs() - m0 - nodeUs);
  const writes = written.writes - w0.writes;
  const bytes = written.bytes - w0.bytes;
  return { wallMs, nodeUs, restUs, serverUs: ((await serverCpuMs(serverComm)) - s0) * 1000, writes, bytes, threads: threadCpuBetween(th0, th1, nodeUs / 1000) };
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
      `round ${r}: drain ${Math.round(JOBS / (drain.wallMs / 1000))} jobs/s, CPU/job node ${fmt(drain.nodeUs / JOBS)} µs, rest ${fmt(drain.restUs / JOBS)} µs (${serverComm} ${fmt(drain.serverUs / JOBS)}), writes/job ${(drain.writes / JOBS).toFixed(3)}, bytes/job ${(drain.bytes / JOBS).toFixed(0)}` +
        ` | enqueue ${Math.round(JOBS / (enq.wallMs / 1000))} jobs/s, node ${fmt(enq.nodeUs / JOBS)} µs, rest ${fmt(enq.restUs / JOBS)} µs (${serverComm} ${fmt(enq.serverUs / JOBS)}), writes/job ${(enq.writes / JOBS).toFixed(3)}, bytes/job ${(enq.bytes / JOBS).toFixed(0)}`,
    );
    console.log(rows.at(-1));
    console.log(`  drain's Node CPU by thread, ms: ${drain.threads.map(([name, ms]) => `${name} ${ms.toFixed(0)}`).join(", ")}`);
  }
} finally {
  await subject.teardown();
}
console.log(`${name} c=${concurrency}, ${JOBS} jobs per round, ${cpus().length} cores`);
process.exit(0);
