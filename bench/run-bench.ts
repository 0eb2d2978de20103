/**
 * `npm run bench`: every subject BENCH_RUNS times (default 3), each run in a fresh child process, on the same
 * services in one sitting; then the services' own ceilings; then BENCHMARKS.md at the repository root.
 *
 *   BENCH_JOBS=20000 BENCH_RUNS=3 BENCH_PICKUPS=200 BENCH_DEAD=100000 npm run bench
 *   BENCH_ONLY=jfast-redis,bullmq npm run bench     (a subset; the file then holds only those)
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { promisify } from "node:util";
import { pgbenchCeiling, redisCeiling } from "./lib/ceilings.js";
import { renderReport, type RunResult } from "./lib/report.js";

const run = promisify(execFile);
const ALL = ["jfast-postgres", "jfast-postgres-kept", "graphile-worker", "pg-boss", "jfast-redis", "bullmq", "jfast-rabbitmq", "amqplib", "amqplib-prefetch"];
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const only = process.env.BENCH_ONLY?.split(",").filter(Boolean);
const subjects = only ?? ALL;

const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");

async function main(): Promise<void> {
  const loadBefore = load();
  const results: RunResult[] = [];
  // Interleaved (a round of every subject, then the next round) so a change of machine load hits all alike.
  for (let round = 1; round <= RUNS; round++) {
    for (const subject of subjects) {
      const t0 = Date.now();
      const { stdout } = await run(process.execPath, ["--import", "tsx", "run-subject.ts", subject], {
        cwd: new URL(".", import.meta.url).pathname,
        maxBuffer: 16 << 20,
        env: process.env,
      });
      const line = stdout.split("\n").find((l) => l.startsWith("BENCH "));
      if (!line) throw new Error(`${subject} printed no result:\n${stdout}`);
      results.push(JSON.parse(line.slice(6)) as RunResult);
      console.log(`round ${round}/${RUNS} ${subject} done in ${((Date.now() - t0) / 1000).toFixed(1)} s (load ${load()})`);
    }
  }
  const ceilings = process.env.BENCH_CEILINGS === "0" ? null : { postgres: await pgbenchCeiling(), redis: await redisCeiling() };
  const markdown = renderReport({
    results,
    ceilings,
    machine: `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
    loadBefore,
    loadAfter: load(),
    env: {
      jobs: Number(process.env.BENCH_JOBS ?? 20_000),
      runs: RUNS,
      pickups: Number(process.env.BENCH_PICKUPS ?? 200),
      dead: Number(process.env.BENCH_DEAD ?? 100_000),
    },
  });
  const target = new URL("../BENCHMARKS.md", import.meta.url);
  await writeFile(target, markdown);
  console.log(markdown);
}

await main();
