/**
 * Memory soak: the example's API, a worker and the dashboard's production build, with jobs flowing and the
 * dashboard's calls replayed at TABS× (TABS tabs of bench/memory/tab-replay.ts across its pages) for SOAK_S. Each
 * process reports its RSS and, after a forced full GC, its live heap every 30 s (bench/memory/sampler.mjs).
 * After WARMUP_S, growth must stay under 10 %: the mean of the last three samples against the mean of the first
 * three after warm-up, per process, RSS and heap after GC. Then the tabs close and the dashboard stops, jobs
 * still flowing, for TAIL_S: the API's RSS unwatched against its RSS watched at the end of the soak.
 *
 *   npm run soak -w @jfast/bench                     an hour, 10 tabs, 50 receipts/s
 *   SOAK_S=600 TABS=10 RATE=50 npm run soak -w @jfast/bench
 *
 * Results: bench/results/soak/samples.jsonl (every sample as it is taken), bench/results/soak.md (the table and
 * the curves) and bench/results/soak.json.
 */
import { appendFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { BENCH, startEnqueuer, startStack } from "../memory/stack.js";
import { PAGES, openTab, type ReplayTab } from "../memory/tab-replay.js";
import { readSamples, soakReport } from "./report.js";

const SOAK_S = Number(process.env.SOAK_S ?? 3600);
const WARMUP_S = Number(process.env.WARMUP_S ?? 600);
const TABS = Number(process.env.TABS ?? 10);
const RATE = Number(process.env.RATE ?? 50);
const TAIL_S = Number(process.env.TAIL_S ?? 240);
const API_PORT = Number(process.env.API_PORT ?? 8700);
const DASHBOARD_PORT = Number(process.env.DASHBOARD_PORT ?? 3700);
const PAGE_MIX = ["deadLetters", "overview", "deadLetters", "queues", "overview", "deadLetters", "jobs", "overview", "deadLetters", "queues"];

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runDir = path.join(BENCH, "results", "soak");
await mkdir(runDir, { recursive: true });
const stack = await startStack({ runDir, apiPort: API_PORT, dashboardPort: DASHBOARD_PORT, dashboard: true, gc: true, sampleMs: 30_000 });
const started = Date.now();
const jobs = startEnqueuer(stack.api, { perSecond: RATE, deadEvery: 100, tenants: 50 });
const tabs: ReplayTab[] = Array.from({ length: TABS }, (_, i) => openTab({ dashboard: stack.dashboard!, cookie: stack.cookie!, service: "billing", page: PAGES[PAGE_MIX[i % PAGE_MIX.length]!]! }));
const progress = path.join(runDir, "progress.log");
log(`soak: ${SOAK_S} s, ${TABS} tabs, ${RATE} receipts/s (one in 100 dead), warm-up ${WARMUP_S} s; samples in ${stack.samplesFile}`);
try {
  let lastBytes = 0;
  while (Date.now() - started < SOAK_S * 1000) {
    await sleep(Math.min(30_000, started + SOAK_S * 1000 - Date.now()));
    const bytes = stack.proxy!.counts();
    const total = bytes.toService + bytes.fromService;
    const line = `${new Date().toISOString()} t=${Math.round((Date.now() - started) / 1000)}s enqueued=${jobs.sent()} accepted=${jobs.accepted()} failed=${jobs.failed()} tabCalls=${tabs.reduce((a, t) => a + t.calls(), 0)} tabErrors=${tabs.reduce((a, t) => a + t.errors(), 0)} adminKBps=${((total - lastBytes) / 30 / 1024).toFixed(1)}`;
    lastBytes = total;
    appendFileSync(progress, `${line}\n`);
  }
} finally {
  for (const tab of tabs) tab.close();
}
const elapsed = (Date.now() - started) / 1000;
const bytes = stack.proxy!.counts();
const calls = tabs.reduce((a, t) => a + t.calls(), 0);
const watchedUntil = Date.now();
log(`tabs closed, dashboard stopped; ${TAIL_S} s more with jobs flowing and nobody watching`);
await stack.stopDashboard();
await sleep(TAIL_S * 1000);
await jobs.stop();
await stack.stop();

const run = { started, watchedUntil, elapsedSeconds: elapsed, tabs: TABS, rate: RATE, warmupSeconds: WARMUP_S, adminBytes: bytes, tabCalls: calls, accepted: jobs.accepted(), failed: jobs.failed() };
const report = soakReport(await readSamples(stack.samplesFile), run);
await writeFile(path.join(BENCH, "results", "soak.md"), report.md);
await writeFile(path.join(BENCH, "results", "soak.json"), `${JSON.stringify({ ...run, started: new Date(started).toISOString(), watchedUntil: new Date(watchedUntil).toISOString(), growth: report.growth, unwatched: report.unwatched }, null, 2)}\n`);
log(`soak done: ${JSON.stringify(report.growth)}; API RSS ${JSON.stringify(report.unwatched)}`);
process.exit(0);
