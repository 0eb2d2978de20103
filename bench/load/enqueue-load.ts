/**
 * Load held: RATE enqueue requests a second (POST /receipts, each one job through the outbox) against the
 * example's API for DURATION_S, with the dashboard open (one tab on the dead letters page, bench/memory/tab-replay.ts)
 * and a worker running the jobs; then every accepted receipt must be extracted (its job completed) and nothing
 * left dead or waiting.
 *
 *   npm run load -w @jfast/bench
 *   RATE=500 DURATION_S=600 npm run load -w @jfast/bench
 *
 * The sender is open-loop with keep-alive (bench/memory/stack.ts startEnqueuer): requests leave on a fixed
 * schedule whatever the answers take, and each latency counts from the time its request was due, so a stall of
 * the API shows in the percentiles instead of slowing the sender (no coordinated omission). The API is
 * `jfast dev --no-worker` on a PostgreSQL database of its own. Results: printed, and bench/results/enqueue-load.json.
 */
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { loadavg } from "node:os";
import path from "node:path";
import pg from "pg";
import { serverCpuMs } from "../lib/server-cpu.js";
import { BENCH, rssOf, startEnqueuer, startStack } from "../memory/stack.js";
import { PAGES, openTab } from "../memory/tab-replay.js";

const RATE = Number(process.env.RATE ?? 500);
const DURATION_S = Number(process.env.DURATION_S ?? 600);
const WARMUP_S = Number(process.env.WARMUP_S ?? 20);
const DRAIN_S = Number(process.env.DRAIN_S ?? 900);
const API_PORT = Number(process.env.API_PORT ?? 8700);
const DASHBOARD_PORT = Number(process.env.DASHBOARD_PORT ?? 3700);
const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const round = (n: number) => Math.round(n * 10) / 10;

async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const runDir = path.join(BENCH, "results", "enqueue-load");
await mkdir(runDir, { recursive: true });
const stack = await startStack({ runDir, apiPort: API_PORT, dashboardPort: DASHBOARD_PORT, dashboard: true, gc: false });
const tab = openTab({ dashboard: stack.dashboard!, cookie: stack.cookie!, service: "billing", page: PAGES.deadLetters! });
const db = new pg.Client({ connectionString: ADMIN_URL.replace(/\/[^/]*$/, `/${stack.database}`) });
await db.connect();
try {
  log(`load average at the start: ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  const sender = startEnqueuer(stack.api, { perSecond: RATE, tenants: 50 });
  log(`warming up ${WARMUP_S} s at ${RATE}/s`);
  await sleep(WARMUP_S * 1000);
  sender.resetLatencies();
  const cpu0 = { api: await cpuMsOf(stack.pids.api!), worker: await cpuMsOf(stack.pids.worker!), dashboard: await cpuMsOf(stack.pids.dashboard!), postgres: await serverCpuMs("postgres") };
  const sent0 = sender.sent();
  const t0 = Date.now();
  const minutes: { minute: number; requests: number; p50: number; p99: number; max: number; apiRssMB: number; backlog: number }[] = [];
  let all: number[] = [];
  for (let minute = 1; minute * 60 <= DURATION_S; minute++) {
    await sleep(t0 + minute * 60_000 - Date.now());
    const chunk = sender.latencies().slice();
    sender.resetLatencies();
    all = all.concat(chunk);
    chunk.sort((a, b) => a - b);
    const depths = (await db.query<{ n: string }>("SELECT count(*) AS n FROM receipts WHERE status <> 'extracted'")).rows[0]!.n;
    minutes.push({ minute, requests: chunk.length, p50: round(pct(chunk, 50)), p99: round(pct(chunk, 99)), max: round(chunk.at(-1) ?? 0), apiRssMB: Math.round((await rssOf(stack.pids.api!)) / 1048576), backlog: Number(depths) });
    log(`minute ${minute}: ${chunk.length} requests, p50 ${round(pct(chunk, 50))} ms, p99 ${round(pct(chunk, 99))} ms, max ${round(chunk.at(-1) ?? 0)} ms; receipts not yet extracted ${depths}; load average ${loadavg()[0]!.toFixed(1)}`);
  }
  const seconds = (Date.now() - t0) / 1000;
  const sentInWindow = sender.sent() - sent0;
  const abandoned = await sender.stop(Number(process.env.ANSWER_WAIT_S ?? 60) * 1000);
  if (abandoned) log(`${abandoned} requests still unanswered ${process.env.ANSWER_WAIT_S ?? 60} s after the last was sent: abandoned, counted with the time waited`);
  all = all.concat(sender.latencies());
  all.sort((a, b) => a - b);
  const cpu1 = { api: await cpuMsOf(stack.pids.api!), worker: await cpuMsOf(stack.pids.worker!), dashboard: await cpuMsOf(stack.pids.dashboard!), postgres: await serverCpuMs("postgres") };
  const cpuShare = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, round(((v - cpu0[k as keyof typeof cpu0]) / (seconds * 1000)) * 100)]));
  log(`sent ${sender.sent()} (${sentInWindow} in the measured ${seconds.toFixed(0)} s: ${round(sentInWindow / seconds)}/s), accepted ${sender.accepted()}, failed ${sender.failed()}`);
  log(`latency from the scheduled send: p50 ${round(pct(all, 50))}, p90 ${round(pct(all, 90))}, p99 ${round(pct(all, 99))}, p99.9 ${round(pct(all, 99.9))}, max ${round(all.at(-1) ?? 0)} ms`);
  log(`CPU while measured (% of one core): ${JSON.stringify(cpuShare)}`);

  // Nothing lost: every accepted receipt extracted, no job dead or waiting.
  const drainStart = Date.now();
  let pending = -1;
  while (Date.now() - drainStart < DRAIN_S * 1000) {
    pending = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM receipts WHERE status <> 'extracted'")).rows[0]!.n);
    if (pending === 0) break;
    await sleep(2000);
  }
  const extracted = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM receipts WHERE status = 'extracted'")).rows[0]!.n);
  // Stored receipts (an abandoned request may still have committed one): each must have been extracted.
  const stored = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM receipts")).rows[0]!.n);
  const depths = await (await fetch(`${stack.api}/jfast/admin/overview.get`, { headers: { authorization: `Bearer ${stack.operatorToken}` } })).json() as { result: { data: { queue: { depths: Record<string, number> } } } };
  const drainSeconds = round((Date.now() - drainStart) / 1000);
  log(`drained in ${drainSeconds} s: ${extracted} of ${stored} stored receipts extracted (${sender.accepted()} accepted), ${pending} pending; queue depths ${JSON.stringify(depths.result.data.queue.depths)}`);
  log(`dashboard tab: ${tab.calls()} calls (${tab.errors()} errors) on ${tab.pushes()} pushes`);
  const result = {
    at: new Date().toISOString(),
    rate: RATE,
    durationSeconds: seconds,
    sent: sender.sent(),
    accepted: sender.accepted(),
    failed: sender.failed(),
    abandoned,
    stored,
    loadAverage: loadavg(),
    latencyMs: { p50: round(pct(all, 50)), p90: round(pct(all, 90)), p99: round(pct(all, 99)), p999: round(pct(all, 99.9)), max: round(all.at(-1) ?? 0) },
    minutes,
    cpuPercentOfOneCore: cpuShare,
    extracted,
    // Lost: acknowledged (202) but not stored. Stored and not yet extracted when the drain window closed is a
    // backlog, reported apart (pendingAfterDrain).
    lost: Math.max(0, sender.accepted() - stored),
    pendingAfterDrain: pending,
    drainSeconds,
    depthsAfter: depths.result.data.queue.depths,
    tab: { calls: tab.calls(), errors: tab.errors(), pushes: tab.pushes() },
  };
  await writeFile(path.join(BENCH, "results", "enqueue-load.json"), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  tab.close();
  await db.end();
  await stack.stop();
}
process.exit(0);
