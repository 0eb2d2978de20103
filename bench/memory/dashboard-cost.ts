/**
 * What one open dashboard tab costs a busy service: the admin bytes per second the service answers, and the
 * service's RSS with the tab open against the same service unwatched.
 *
 *   npm run dashboard-cost -w @jfast/bench
 *   BEFORE_REPO=/path/to/older/checkout BEFORE_DASHBOARD=/path/to/its/apps/dashboard npm run dashboard-cost -w @jfast/bench
 *
 * For each variant (the checkout, and an older one when BEFORE_REPO is set; its runtime, CLI and dashboard
 * built): the example's API and a worker on a database of their own, receipts enqueued at RATE a second (one in
 * 50 unreadable: a dead letter), 120 dead letters first; PHASE_S seconds unwatched, then the dashboard's
 * production build with one tab on the dead letters page, then on the overview, PHASE_S seconds each. The tab
 * is bench/memory/tab-replay.ts: the page's calls through the dashboard's server, re-read as the page re-reads
 * them (an older dashboard's pushes name no parts, and its pages re-read every view on each one). The bytes are counted by a proxy between the dashboard's server and the API (bench/memory/byte-proxy.ts);
 * RSS is read from /proc every 5 s. Results: printed and in bench/results/dashboard-cost.json.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { BENCH, rssOf, startEnqueuer, startStack } from "./stack.js";
import { PAGES, openTab, type ReplayTab } from "./tab-replay.js";

const RATE = Number(process.env.RATE ?? 20);
const PHASE_S = Number(process.env.PHASE_S ?? 150);
const WARMUP_S = 20;
const API_PORT = Number(process.env.API_PORT ?? 8700);
const DASHBOARD_PORT = Number(process.env.DASHBOARD_PORT ?? 3700);

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

interface Variant {
  name: string;
  repo?: string;
  dashboardDir?: string;
}

async function measure(variant: Variant) {
  const runDir = path.join(BENCH, "results", "dashboard-cost", variant.name);
  await mkdir(runDir, { recursive: true });
  const stack = await startStack({ repo: variant.repo, dashboardDir: variant.dashboardDir, runDir, apiPort: API_PORT, dashboardPort: DASHBOARD_PORT, sampleMs: 30_000 });
  const seed = startEnqueuer(stack.api, { perSecond: 200, deadEvery: 1 });
  await sleep(600);
  await seed.stop();
  const jobs = startEnqueuer(stack.api, { perSecond: RATE, deadEvery: 50 });
  const rss: { t: number; phase: string; rss: number }[] = [];
  let phase = "unwatched";
  const sampler = setInterval(() => void rssOf(stack.pids.api!).then((v) => rss.push({ t: Date.now(), phase, rss: v })), 5000);
  try {
    log(`${variant.name}: ${PHASE_S} s unwatched, ${RATE} receipts/s`);
    await sleep(PHASE_S * 1000);
    await stack.startDashboard();
    let tab: ReplayTab | null = null;
    const pages: Record<string, { bytesPerSecond: number; toService: number; fromService: number; seconds: number; calls: number; pushes: number }> = {};
    for (const [label, views] of [["dead letters", PAGES.deadLetters!], ["overview", PAGES.overview!]] as const) {
      phase = `watched: ${label}`;
      tab?.close();
      tab = openTab({ dashboard: stack.dashboard!, cookie: stack.cookie!, service: "billing", page: views });
      await sleep(WARMUP_S * 1000);
      const start = stack.proxy!.counts();
      const [calls0, pushes0] = [tab.calls(), tab.pushes()];
      const t0 = Date.now();
      await sleep((PHASE_S - WARMUP_S) * 1000);
      const end = stack.proxy!.counts();
      const seconds = (Date.now() - t0) / 1000;
      const toService = end.toService - start.toService;
      const fromService = end.fromService - start.fromService;
      const [calls, pushes] = [tab.calls() - calls0, tab.pushes() - pushes0];
      pages[label] = { bytesPerSecond: Math.round((toService + fromService) / seconds), toService, fromService, seconds, calls, pushes };
      log(`${variant.name}, ${label}: ${(pages[label]!.bytesPerSecond / 1024).toFixed(1)} KB/s of admin traffic (${(fromService / 1024).toFixed(0)} KB answered in ${seconds.toFixed(0)} s; the tab made ${calls} calls on ${pushes} pushes)`);
    }
    tab?.close();
    const last = (p: (s: string) => boolean) => rss.filter((s) => p(s.phase)).slice(-12).map((s) => s.rss);
    const unwatched = median(last((p) => p === "unwatched"));
    const watched = median(last((p) => p.startsWith("watched")));
    log(`${variant.name}: API RSS ${mb(unwatched)} MB unwatched, ${mb(watched)} MB watched (medians of the last minute of each)`);
    return { variant: variant.name, rate: RATE, phaseSeconds: PHASE_S, pages, apiRss: { unwatchedMB: mb(unwatched), watchedMB: mb(watched), deltaMB: mb(watched - unwatched) }, rssSamples: rss.map((s) => ({ ...s, rss: mb(s.rss) })), enqueued: jobs.sent() };
  } finally {
    clearInterval(sampler);
    await jobs.stop();
    await stack.stop();
  }
}

const variants: Variant[] = [];
if (process.env.BEFORE_REPO) variants.push({ name: "before", repo: process.env.BEFORE_REPO, dashboardDir: process.env.BEFORE_DASHBOARD });
if (process.env.ONLY_BEFORE !== "1") variants.push({ name: "after" });
const results = [];
for (const variant of variants) results.push(await measure(variant));
await writeFile(path.join(BENCH, "results", "dashboard-cost.json"), `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
for (const r of results) {
  console.log(`${r.variant}: ${Object.entries(r.pages).map(([p, v]) => `${p} ${(v.bytesPerSecond / 1024).toFixed(1)} KB/s`).join(", ")}; API RSS +${r.apiRss.deltaMB} MB watched (${r.apiRss.unwatchedMB} → ${r.apiRss.watchedMB} MB)`);
}
process.exit(0);
