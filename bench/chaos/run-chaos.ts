/**
 * `npm run chaos`: per backend, an engine of the run's own, two `jfast worker` processes behind proxies of the
 * run's own, and each scenario CHAOS_RUNS times (default 3) on a batch of CHAOS_JOBS jobs (default 2000; CI
 * runs 500, once): worker kills proven to land mid-job, the engine killed as it dies in production, a worker
 * whose clock runs 30 s ahead, the network's faults, and CHAOS_BLOCKED handlers (default 3) that block their event
 * loop for three leases, and flows (a root, 10 steps, a join) with a worker killed mid-flow (flows-scenario.ts; on the
 * backends with flows); then malformed messages and an oversized payload.
 * `kafka`: an inbox-guarded `on` handler consumes CHAOS_JOBS events while a broker of the run's own is killed with -9
 * (scenario `engine`), or while the same network faults hit every client connection to it (`network`: the broker
 * advertises a proxy's port); the other scenarios have no Kafka counterpart (`blocked` is about job leases, which
 * a Kafka consumer does not hold).
 * Writes RELIABILITY.md at the repository root from what it observed. CHAOS_REPORT=section (for a run of some
 * scenarios) keeps the file's full matrix and writes this run's tables in a section of their own instead.
 *
 *   CHAOS_JOBS=200 CHAOS_RUNS=1 CHAOS_KILLS=2 CHAOS_BACKENDS=redis CHAOS_SCENARIOS=kill,engine,clock,network,blocked,flows \
 *     CHAOS_NETWORK=latency,cut,blackhole,halfclose npm run chaos
 *
 * rabbitmq-cluster (opt-in) runs quorum queues on the loopback three-node cluster (docker/rabbitmq-cluster); its
 * engine kill is a kill -9 of the node every process is connected to; it has no proxy, so no network scenarios.
 *
 * Exits 1 if any job was lost (except what `appendfsync everysec` is allowed to lose, stated), ran its effect
 * twice, got stuck, died unexpectedly, a kill landed between jobs, or a worker crashed.
 */
import { readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { runKafka } from "./kafka-run.js";
import { renderReliability, renderSection, SECTION } from "./reliability.js";
import { runBackend, type BackendRun } from "./run-backend.js";
import type { NetworkFault } from "./scenarios.js";
import type { ChaosBackend } from "./service.js";

// rabbitmq-cluster is opt-in (CHAOS_BACKENDS=rabbitmq-cluster) until the stall after a connected node's loss
// (docs/rabbitmq.md#what-survives-a-node-loss) is fixed.
const backends = (process.env.CHAOS_BACKENDS ?? "postgres,redis,rabbitmq,kafka").split(",").filter(Boolean) as Array<ChaosBackend | "kafka">;
const jobs = Number(process.env.CHAOS_JOBS ?? 2000);
const kills = Number(process.env.CHAOS_KILLS ?? 2);
const runs = Number(process.env.CHAOS_RUNS ?? 3);
const scenarios = (process.env.CHAOS_SCENARIOS ?? "kill,engine,clock,network,blocked,flows").split(",").filter(Boolean);
const blocked = Number(process.env.CHAOS_BLOCKED ?? 3);
const networkFaults = (process.env.CHAOS_NETWORK ?? "latency,cut,blackhole,halfclose").split(",").filter(Boolean) as NetworkFault[];

const started = Date.now();
const loadBefore = loadavg().map((l) => l.toFixed(1)).join(" ");
const outcomes: BackendRun[] = [];
for (const backend of backends) {
  const t0 = Date.now();
  console.log(`chaos: ${backend}, ${jobs} jobs per scenario, ${runs} run(s), ${kills} kills per run`);
  outcomes.push(backend === "kafka" ? await runKafka({ events: jobs, runs, scenarios, network: networkFaults }) : await runBackend({ backend, jobs, kills, blocked, runs, network: networkFaults, scenarios }));
  console.log(`chaos: ${backend} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
const file = new URL("../../RELIABILITY.md", import.meta.url);
const previous = await readFile(file, "utf8").catch(() => "");
// The section `npm run fuzz` writes (between its markers) is kept as it is.
const fuzzSection = /\n<!-- fuzz:begin[\s\S]*<!-- fuzz:end -->\n/.exec(previous)?.[0] ?? "";
const seconds = (Date.now() - started) / 1000;
let markdown: string;
if (process.env.CHAOS_REPORT === "section") {
  const section = renderSection({ outcomes, jobs, runs, scenarios, loadBefore, seconds });
  const matrix = previous.replace(SECTION, "\n").replace(fuzzSection, "");
  markdown = matrix.replace(/\n*$/, "\n") + section + fuzzSection;
} else {
  markdown = renderReliability({ outcomes, jobs, kills, runs, loadBefore, seconds }) + fuzzSection;
}
await writeFile(file, markdown);
console.log(markdown);
const failed = outcomes.filter((o) => o.problems.length > 0 || o.scenarios.some((s) => s.problems.length > 0));
for (const o of failed) console.error(`chaos: ${o.backend} FAILED:\n  ${[...o.problems, ...o.scenarios.flatMap((s) => s.problems.map((p) => `${s.scenario}: ${p}`))].join("\n  ")}`);
process.exit(failed.length > 0 ? 1 : 0);
