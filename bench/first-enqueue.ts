/**
 * The bench's enqueue figure, alone and many times: each run is a fresh process that sets a subject up and
 * times its first bulk enqueue (BENCH_JOBS jobs, 20 000 by default, in the subject's own chunks), which is what
 * `npm run bench` reports; the subjects take turns, run after run, so a change of machine load hits them alike.
 * With BENCH_TIMELINE=1 a jfast PostgreSQL run also prints when each statement of its enqueue was sent and
 * answered (the pipelined slices, the commits, the gaps between them).
 *
 *   npx tsx first-enqueue.ts <subject> [<subject> ...] [--runs 5]
 *   npx tsx first-enqueue.ts jfast-postgres graphile-worker --runs 5
 *
 * Subjects are those of run-subject.ts. It prints each run's milliseconds, then per subject the median and the
 * range, and the first subject's median against each other's.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { SUBJECTS } from "./subjects/index.js";
import { singleProcess } from "./lib/subject.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);

async function oneRun(name: string): Promise<void> {
  const lines: string[] = [];
  let t0 = 0;
  if (process.env.BENCH_TIMELINE === "1") {
    const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === "string" ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? "");
      const label = /INSERT INTO jfast_jobs/.test(text) ? "insert" : text.trim().split(/\s+/)[0]!;
      const sent = performance.now() - t0;
      const result = query.apply(this, args);
      if (t0 && result instanceof Promise) {
        void result.then(() => lines.push(`  ${label.padEnd(8)} sent ${sent.toFixed(1)} ms, answered ${(performance.now() - t0).toFixed(1)} ms`), () => undefined);
      }
      return result;
    } as typeof pg.Client.prototype.query;
  }
  const subject = SUBJECTS[name]!(singleProcess());
  await subject.setup();
  try {
    t0 = performance.now();
    await subject.enqueue(JOBS);
    const ms = performance.now() - t0;
    t0 = 0;
    process.stdout.write(`FIRST ${JSON.stringify({ subject: name, ms })}\n${lines.join("\n")}\n`);
  } finally {
    await subject.teardown();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (process.env.FIRST_ENQUEUE_CHILD) {
    await oneRun(args[0]!);
    process.exit(0);
  }
  const runsAt = args.indexOf("--runs");
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
  const names = args.filter((_, i) => runsAt < 0 || (i !== runsAt && i !== runsAt + 1));
  const unknown = names.filter((n) => !SUBJECTS[n]);
  if (names.length === 0 || unknown.length > 0 || !(runs > 0)) {
    console.error(`usage: npx tsx first-enqueue.ts <${Object.keys(SUBJECTS).join("|")}> [...] [--runs 5]`);
    process.exit(2);
  }
  const run = promisify(execFile);
  const times = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let r = 1; r <= runs; r++) {
    for (const name of names) {
      const { stdout } = await run(process.execPath, ["--import", "tsx", "first-enqueue.ts", name], {
        env: { ...process.env, FIRST_ENQUEUE_CHILD: "1" },
        maxBuffer: 16 * 1024 * 1024,
      });
      const line = stdout.split("\n").find((l) => l.startsWith("FIRST "));
      if (!line) throw new Error(`${name}: no result in its output:\n${stdout}`);
      const { ms } = JSON.parse(line.slice(6)) as { ms: number };
      times.get(name)!.push(ms);
      console.log(`run ${r} ${name}: ${ms.toFixed(0)} ms`);
      const timeline = stdout.slice(stdout.indexOf(line) + line.length).replace(/^\n+|\s+$/g, "");
      if (timeline) console.log(timeline);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [name, xs] of times) {
    console.log(`${name}: median ${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}), ${Math.round(JOBS / (median(xs) / 1000))} jobs/s`);
  }
  const [first, ...others] = names;
  for (const other of others) {
    console.log(`${first} / ${other}: ${(median(times.get(other)!) / median(times.get(first!)!)).toFixed(2)}× (jobs/s ratio of the medians)`);
  }
  process.exit(0);
}

await main();
