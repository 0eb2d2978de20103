/**
 * `npm run chaos`: per backend, CHAOS_JOBS jobs (default 5000; CI runs 500) whose handler records its effect in PostgreSQL
 * through an inbox key; two `jfast worker` processes, one killed with SIGKILL at random moments and restarted,
 * the broker restarted once mid-run; then malformed messages injected straight into the backend, and a payload
 * over the size limit. Writes RELIABILITY.md at the repository root from what it observed.
 *
 *   CHAOS_JOBS=500 CHAOS_KILLS=6 CHAOS_BACKENDS=redis,rabbitmq npm run chaos
 *
 * rabbitmq-cluster runs on quorum queues on the loopback three-node cluster (docker/rabbitmq-cluster, started
 * when needed); its "broker restart" is a kill -9 of the node every process is connected to, started again.
 *
 * Exits 1 if any job was lost, ran its effect twice, got stuck, died unexpectedly, or a worker crashed.
 */
import { readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { renderReliability, type BackendOutcome } from "./reliability.js";
import { runBackend } from "./run-backend.js";
import type { ChaosBackend } from "./service.js";

// rabbitmq-cluster is opt-in (CHAOS_BACKENDS=rabbitmq-cluster) until the stall after a connected node's loss
// (docs/rabbitmq.md#what-survives-a-node-loss) is fixed.
const backends = (process.env.CHAOS_BACKENDS ?? "postgres,redis,rabbitmq").split(",").filter(Boolean) as ChaosBackend[];
const jobs = Number(process.env.CHAOS_JOBS ?? 5000);
const kills = Number(process.env.CHAOS_KILLS ?? 4);

const started = Date.now();
const loadBefore = loadavg().map((l) => l.toFixed(1)).join(" ");
const outcomes: BackendOutcome[] = [];
for (const backend of backends) {
  const t0 = Date.now();
  console.log(`chaos: ${backend}, ${jobs} jobs, ${kills} kills`);
  outcomes.push(await runBackend({ backend, jobs, kills }));
  console.log(`chaos: ${backend} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
const file = new URL("../../RELIABILITY.md", import.meta.url);
// The section `npm run fuzz` writes (between its markers) is kept as it is.
const fuzzSection = /\n<!-- fuzz:begin[\s\S]*<!-- fuzz:end -->\n/.exec(await readFile(file, "utf8").catch(() => ""))?.[0] ?? "";
const markdown = renderReliability({ outcomes, jobs, kills, loadBefore, seconds: (Date.now() - started) / 1000 }) + fuzzSection;
await writeFile(file, markdown);
console.log(markdown);
const failed = outcomes.filter((o) => o.problems.length > 0);
for (const o of failed) console.error(`chaos: ${o.backend} FAILED:\n  ${o.problems.join("\n  ")}`);
process.exit(failed.length > 0 ? 1 : 0);
