/**
 * One run of one subject, in its own process: prints a JSON line of its measurements on stdout.
 *   npx tsx run-subject.ts <subject>      (BENCH_JOBS, BENCH_PICKUPS, BENCH_DEAD)
 */
import { SUBJECTS } from "./subjects/index.js";
import { percentile } from "./lib/stats.js";
import { sleep, type Subject } from "./lib/subject.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
const PICKUPS = Number(process.env.BENCH_PICKUPS ?? 200);
const DEAD = Number(process.env.BENCH_DEAD ?? 100_000);

async function pickups(subject: Subject, one: () => Promise<number> = () => subject.pickupOne()): Promise<{ p50: number; p99: number }> {
  await subject.startIdle();
  await sleep(200);
  const samples: number[] = [];
  for (let i = 0; i < PICKUPS; i++) {
    // Idle long enough that the worker is waiting for work, not between two claims.
    await sleep(20);
    samples.push(await one());
  }
  await subject.stopIdle();
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function main(): Promise<void> {
  const name = process.argv[2]!;
  // "<subject>@node20": the same subject, run by run-bench.ts on Node 20 (a row of its own).
  const base = name.replace(/@node\d+$/, "");
  const factory = SUBJECTS[base];
  if (!factory) throw new Error(`no bench subject named "${base}"; known: ${Object.keys(SUBJECTS).join(", ")}`);
  const subject = factory();
  await subject.setup();
  const result: Record<string, unknown> = { subject: name, label: `${subject.label} (Node ${process.versions.node.split(".")[0]})`, settings: subject.settings };
  try {
    let t0 = performance.now();
    await subject.enqueue(JOBS);
    result.enqueue = JOBS / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    await subject.drain(JOBS, 1);
    result.c1 = JOBS / ((performance.now() - t0) / 1000);
    await subject.enqueue(JOBS);
    t0 = performance.now();
    await subject.drain(JOBS, 10);
    result.c10 = JOBS / ((performance.now() - t0) / 1000);
    result.pickup = await pickups(subject);
    const elsewhere = subject.pickupOneElsewhere ? () => subject.pickupOneElsewhere!() : undefined;
    if (elsewhere) result.pickupElsewhere = await pickups(subject, elsewhere);
    if (subject.fillDead && DEAD > 0) {
      await subject.fillDead(DEAD);
      // Enqueued elsewhere where that differs: the worker claims the job through the table the dead rows are in.
      result.pickupDead = await pickups(subject, elsewhere);
    }
  } finally {
    await subject.teardown();
  }
  result.rssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
  process.exit(0);
}

await main();
