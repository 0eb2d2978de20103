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
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { BENCH, startEnqueuer, startStack } from "../memory/stack.js";
import { PAGES, openTab, type ReplayTab } from "../memory/tab-replay.js";

const SOAK_S = Number(process.env.SOAK_S ?? 3600);
const WARMUP_S = Number(process.env.WARMUP_S ?? 600);
const TABS = Number(process.env.TABS ?? 10);
const RATE = Number(process.env.RATE ?? 50);
const TAIL_S = Number(process.env.TAIL_S ?? 240);
const API_PORT = Number(process.env.API_PORT ?? 8700);
const DASHBOARD_PORT = Number(process.env.DASHBOARD_PORT ?? 3700);
const ROLES = ["api", "worker", "dashboard"] as const;
const PAGE_MIX = ["deadLetters", "overview", "deadLetters", "queues", "overview", "deadLetters", "jobs", "overview", "deadLetters", "queues"];

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

interface Sample {
  t: number;
  role: string;
  rss: number;
  heapUsed: number;
  heapAfterGc: number | null;
}

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

// The samples of the processes started for this run (the file is appended to by each process).
const samples = (await readFile(stack.samplesFile, "utf8"))
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as Sample)
  .filter((s) => s.t >= started - 120_000);
const apiSamples = samples.filter((s) => s.role === "api");
const watchedRss = mean(apiSamples.filter((s) => s.t <= watchedUntil).slice(-4).map((s) => s.rss));
const unwatchedRss = mean(apiSamples.filter((s) => s.t > watchedUntil + 60_000).map((s) => s.rss));
const unwatched = { watchedRssMB: mb(watchedRss), unwatchedRssMB: mb(unwatchedRss), deltaMB: mb(watchedRss - unwatchedRss) };
const byRole = Object.fromEntries(ROLES.map((role) => [role, samples.filter((s) => s.role === role && s.t <= watchedUntil).sort((a, b) => a.t - b.t)]));
const growth = Object.fromEntries(
  ROLES.map((role) => {
    const after = byRole[role]!.filter((s) => s.t >= started + WARMUP_S * 1000);
    const first = after.slice(0, 3);
    const last = after.slice(-3);
    const pctOf = (pick: (s: Sample) => number) => Math.round(((mean(last.map(pick)) - mean(first.map(pick))) / mean(first.map(pick))) * 1000) / 10;
    return [role, { rssFirstMB: mb(mean(first.map((s) => s.rss))), rssLastMB: mb(mean(last.map((s) => s.rss))), rssGrowthPct: pctOf((s) => s.rss), heapFirstMB: mb(mean(first.map((s) => s.heapAfterGc ?? s.heapUsed))), heapLastMB: mb(mean(last.map((s) => s.heapAfterGc ?? s.heapUsed))), heapGrowthPct: pctOf((s) => s.heapAfterGc ?? s.heapUsed), samples: byRole[role]!.length }];
  }),
);

// The table: one row per 30-s sample, each process's RSS and heap after GC in MB.
const minuteOf = (t: number) => ((t - started) / 60_000).toFixed(1);
const rows = byRole.api!.map((a, i) => {
  const cells = ROLES.map((role) => {
    const s = byRole[role]![i];
    return s ? `${mb(s.rss)} | ${mb(s.heapAfterGc ?? s.heapUsed)}` : " | ";
  });
  return `| ${minuteOf(a.t)} | ${cells.join(" | ")} |`;
});
const chart = (role: string, pick: (s: Sample) => number) => {
  const series = byRole[role]!;
  const max = Math.max(...series.map(pick));
  // One line per 5 minutes, a bar scaled to the largest sample.
  return series
    .filter((_, i) => i % 10 === 0 || i === series.length - 1)
    .map((s) => `${minuteOf(s.t).padStart(5)} min ${"#".repeat(Math.max(1, Math.round((pick(s) / max) * 50))).padEnd(50)} ${mb(pick(s))} MB`)
    .join("\n");
};
const md = [
  `# Soak: ${Math.round(elapsed / 60)} minutes, ${TABS} dashboard tabs, ${RATE} receipts/s (${new Date(started).toISOString()})`,
  "",
  `Admin traffic at the API: ${((bytes.toService + bytes.fromService) / elapsed / 1024).toFixed(1)} KB/s for ${TABS} tabs; ${calls} tab calls; ${jobs.accepted()} receipts accepted, ${jobs.failed()} failed.`,
  "",
  `The API's RSS at the end, watched by ${TABS} tabs: ${unwatched.watchedRssMB} MB (mean of the last 4 samples); then nobody watching, from a minute after the dashboard stopped: ${unwatched.unwatchedRssMB} MB (${unwatched.deltaMB} MB apart).`,
  "",
  "| process | RSS after warm-up (MB) | RSS at the end (MB) | growth | heap after GC after warm-up (MB) | at the end (MB) | growth |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...ROLES.map((r) => `| ${r} | ${growth[r]!.rssFirstMB} | ${growth[r]!.rssLastMB} | ${growth[r]!.rssGrowthPct} % | ${growth[r]!.heapFirstMB} | ${growth[r]!.heapLastMB} | ${growth[r]!.heapGrowthPct} % |`),
  "",
  ...ROLES.flatMap((r) => [`RSS of the ${r}:`, "```", chart(r, (s) => s.rss), "```", `Heap after GC of the ${r}:`, "```", chart(r, (s) => s.heapAfterGc ?? s.heapUsed), "```", ""]),
  "| minute | API RSS | API heap | worker RSS | worker heap | dashboard RSS | dashboard heap |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  "",
].join("\n");
await writeFile(path.join(BENCH, "results", "soak.md"), md);
await writeFile(path.join(BENCH, "results", "soak.json"), `${JSON.stringify({ started: new Date(started).toISOString(), elapsedSeconds: elapsed, tabs: TABS, rate: RATE, warmupSeconds: WARMUP_S, adminBytes: bytes, tabCalls: calls, accepted: jobs.accepted(), failed: jobs.failed(), growth, unwatched }, null, 2)}\n`);
log(`soak done: ${JSON.stringify(growth)}; API RSS ${JSON.stringify(unwatched)}`);
process.exit(0);
