/**
 * How long each dashboard page takes to show its data with 100 000 dead letters (and a million finished jobs, a
 * million queued) in a service's PostgreSQL queue, and what the admin procedures and their SQL cost on the server.
 *
 *   npm run dashboard-load -w @jfast/bench
 *   DEAD=100000 COMPLETED=1000000 QUEUED=1000000 AUDIT=5000 LOADS=5 npm run dashboard-load -w @jfast/bench
 *
 * 1. a fresh schema: the service (bench/dashboard/service.mjs, no worker) migrates it, then SQL fills it
 *    (bench/dashboard/seed.ts) and VACUUM ANALYZE leaves it as autovacuum would;
 * 2. each admin procedure behind a page, called directly with fetch: one warm-up, then LOADS calls;
 * 3. each page in Debian's Chromium (Playwright) through the built dashboard (its jfast-dashboard binary): one warm-up load,
 *    then LOADS loads, each in a new tab, from navigation until the page's data is on screen;
 * 4. EXPLAIN (ANALYZE, BUFFERS) of the SQL behind the heavy views;
 * then the schema is dropped. Results: printed, and in bench/results/dashboard-load.{json,md}.
 *
 * Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test), /usr/bin/chromium, the runtime
 * built (dist/) and the dashboard built (apps/dashboard/dist/); builds either when missing. Timings are of this machine at this
 * moment: compare runs on the same machine only.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { chromium, type Browser } from "playwright-core";
import { freePort, startDashboard, workspaceDashboard, type Running } from "../e2e/dashboard/fixtures.js";
import { explain, type ExplainCase, type ExplainSummary } from "./dashboard/explain.js";
import { EXTRA_CALLS, PAGES, resolveInput, type Call, type PageContext } from "./dashboard/pages.js";
import { QUEUE, analyze, seedAudit, seedCompleted, seedDead, seedQueued, seedThroughput } from "./dashboard/seed.js";
import { startServiceProcess, writeServiceRoot, type ServiceProcess } from "./dashboard/service-process.js";
import { median, withSpread } from "./lib/stats.js";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const DEAD = Number(process.env.DEAD ?? 100_000);
const COMPLETED = Number(process.env.COMPLETED ?? 1_000_000);
const QUEUED = Number(process.env.QUEUED ?? 1_000_000);
const AUDIT = Number(process.env.AUDIT ?? 5_000);
const LOADS = Number(process.env.LOADS ?? 5);
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(BENCH);
const RUNTIME_SRC = path.join(REPO, "packages", "runtime", "src");
const SUFFIX = randomBytes(4).toString("hex");
const SCHEMA = `jfast_bench_dashboard_${SUFFIX}`;
const TOKEN = `operator-bench-${SUFFIX}-${randomBytes(8).toString("hex")}`;
const PASSWORD = `bench-${SUFFIX}`;
const SERVICE = "billing";

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The runtime's dist/ and the dashboard's dist/ exist (built here when missing); a stale dist is named. */
function preflight(): string[] {
  const notes: string[] = [];
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const dist = path.join(REPO, "packages", "runtime", "dist", "index.js");
  if (!existsSync(dist)) {
    log("building the runtime (dist/ is missing)");
    execFileSync("npm", ["run", "build", "-w", "@jfast/runtime"], { cwd: REPO, stdio: "inherit" });
  }
  const newer = execFileSync("find", [RUNTIME_SRC, "-newer", dist, "-type", "f", "-not", "-name", "*.test.ts"], { encoding: "utf8" }).trim();
  if (newer) notes.push(`the runtime's dist/ is older than ${newer.split("\n").length} source file(s): the service runs the last build (npm run build -w @jfast/runtime)`);
  const buildId = path.join(REPO, "apps", "dashboard", "dist", "manifest.json");
  if (!existsSync(buildId)) {
    log("building the dashboard (apps/dashboard/dist/ is missing)");
    execFileSync("npm", ["run", "build", "-w", "@jfast/dashboard"], { cwd: REPO, stdio: "inherit" });
  }
  notes.push(`dashboard build of ${statSync(buildId).mtime.toISOString()}`);
  return notes;
}

async function timeCall(service: string, call: Call, ctx: PageContext): Promise<number[]> {
  const input = resolveInput(call.input, ctx);
  const url = `${service}/jfast/admin/${call.procedure}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;
  const times: number[] = [];
  for (let i = 0; i <= LOADS; i++) {
    if (call.apartMs) await new Promise((resolve) => setTimeout(resolve, call.apartMs));
    const t0 = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = await response.text();
    const ms = performance.now() - t0;
    if (response.status !== 200) throw new Error(`${call.procedure} answered ${response.status}: ${body.slice(0, 500)}`);
    if (i > 0) times.push(ms);
  }
  return times;
}

function explainCases(ctx: PageContext): ExplainCase[] {
  const sql = (name: string) => `backends/postgres/sql/${name}.sql`;
  const containment = JSON.stringify({ customer: { id: ctx.customerId } });
  return [
    { label: "dead letters list (first 100)", file: sql("list-dead"), params: [QUEUE, 101, 0] },
    { label: "groups: the newest 10 000 dead letters", file: sql("list-dead"), params: [QUEUE, 10_001, 0] },
    // A filtered scan (tenant, task, error text) reads pages of 500, 1 000, 2 000, 4 000, 2 500: its last one.
    { label: "filtered scan: its last page (2 500 at offset 7 500)", file: sql("list-dead"), params: [QUEUE, 2_500, 7_500] },
    { label: "preview count / overview depths", file: sql("depths"), params: [QUEUE, 1_000] },
    { label: "depthsByTask", file: sql("depths-by-task"), params: [QUEUE, null, 10_000, 1_000] },
    { label: "depthsByTask of one tenant", file: sql("depths-by-task"), params: [QUEUE, "tenant-3", 10_000, 1_000] },
    { label: "jobs search by payload (customer.id)", file: sql("search-dead"), params: [QUEUE, containment, null, null, null, null, 51] },
    { label: "jobs search by id", file: sql("get-job"), params: [QUEUE, ctx.deadId] },
    // jobs.list reads a window of at most 1 000 index entries per page (docs/admin-api.md#listing-jobs); the files
    // hold the form with a cursor, here at the start of the index.
    { label: "jobs list: dead letters oldest first, one page", file: sql("list-dead-page"), params: [QUEUE, "dead", null, null, "-infinity", 0, 1_000, 50] },
    { label: "jobs list: ready of one tenant, one window", file: sql("list-due"), params: [QUEUE, "ready", null, "tenant-3", "-infinity", 0, 1_000, 50] },
    { label: "jobs list: completed, one window of the primary key", file: sql("list-finished"), params: [QUEUE, "completed", null, null, "", null, 1_000, 50] },
    { label: "audit trail (first 100)", file: "admin/sql/list-audit.sql", params: [100, null, null] },
  ];
}

interface PageResult {
  name: string;
  from: string;
  waitsFor: string;
  browserMs: number[];
  /** Per measured load: the admin procedures requested until the data showed, and the requests aborted. */
  requests: { sent: string[]; aborted: string[] }[];
  calls: { procedure: string; ms: number[] }[];
}

async function main(): Promise<void> {
  const notes = preflight();
  const started = new Date();
  const loadBefore = loadavg().map((l) => l.toFixed(1)).join(" ");
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  let service: ServiceProcess | null = null;
  let dashboard: Running | null = null;
  let browser: Browser | null = null;
  try {
    const pgVersion = (await client.query("SHOW server_version")).rows[0].server_version as string;
    await client.query(`CREATE SCHEMA "${SCHEMA}"`);
    const root = path.join(BENCH, ".tmp", `dashboard-${SUFFIX}`);
    await writeServiceRoot({ root, databaseUrl: DATABASE_URL, schema: SCHEMA });
    service = await startServiceProcess({ root, port: await freePort(), tokens: `bench:operator:${TOKEN}` });
    log(`service on ${service.url}, schema ${SCHEMA} migrated`);

    await client.query(`SET search_path TO "${SCHEMA}"`);
    const seeded: Record<string, number> = {};
    for (const [what, seed] of [
      ["dead", () => seedDead(client, DEAD)],
      ["completed", () => seedCompleted(client, COMPLETED)],
      ["queued", () => seedQueued(client, QUEUED)],
      ["audit", () => seedAudit(client, AUDIT)],
      ["throughput", () => seedThroughput(client)],
      ["vacuum analyze", () => analyze(client)],
    ] as const) {
      const t0 = performance.now();
      await seed();
      seeded[what] = Math.round(performance.now() - t0);
      log(`seeded ${what} in ${(seeded[what]! / 1000).toFixed(1)} s`);
    }
    const counts = (await client.query("SELECT state, count(*)::int AS n FROM jfast_jobs GROUP BY state ORDER BY state")).rows;
    const tableSize = (await client.query("SELECT pg_size_pretty(pg_total_relation_size('jfast_jobs')) AS size")).rows[0].size as string;
    log(`jfast_jobs: ${counts.map((r) => `${r.n} ${r.state}`).join(", ")}; ${tableSize} with indexes`);
    const deadId = (await client.query("SELECT id FROM jfast_jobs WHERE queue = $1 AND state = 'dead' ORDER BY died_at DESC, seq DESC OFFSET $2 LIMIT 1", [QUEUE, Math.floor(DEAD / 20)])).rows[0].id as string;
    const ctx: PageContext = { service: SERVICE, deadId, customerId: "cus_42" };

    // Server side: the procedures alone, before any browser adds load.
    const results: PageResult[] = [];
    for (const page of PAGES) {
      const calls = [];
      for (const call of page.calls) calls.push({ procedure: call.procedure, ms: await timeCall(service.url, call, ctx) });
      results.push({ name: page.name, from: page.from, waitsFor: page.waitsFor, browserMs: [], requests: [], calls });
    }
    const extras = [];
    for (const extra of EXTRA_CALLS) extras.push({ name: extra.name, procedure: extra.call.procedure, ms: await timeCall(service.url, extra.call, ctx) });
    log("admin procedures timed");

    dashboard = await startDashboard(workspaceDashboard(), { password: PASSWORD, services: [{ name: SERVICE, url: service.url, token: TOKEN }] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: dashboard.url });
    const login = await context.newPage();
    await login.goto("/login");
    await login.getByLabel("Password").fill(PASSWORD);
    await login.getByRole("button", { name: "Log in" }).click();
    await login.getByRole("heading", { name: "Overview" }).waitFor();
    await login.close();
    for (const [i, page] of PAGES.entries()) {
      for (let round = 0; round <= LOADS; round++) {
        const tab = await context.newPage();
        // The admin calls the page made through the dashboard until its data was on screen, and those it gave up on.
        const sent: string[] = [];
        const aborted: string[] = [];
        const procedureOf = (url: string) => /\/api\/admin\/[^/]+\/([^/?]+)/.exec(url)?.[1];
        tab.on("request", (r) => void (procedureOf(r.url()) && sent.push(procedureOf(r.url())!)));
        tab.on("requestfailed", (r) => void (procedureOf(r.url()) && aborted.push(procedureOf(r.url())!)));
        try {
          const ms = await page.load(tab, ctx);
          if (round > 0) {
            results[i]!.browserMs.push(ms);
            results[i]!.requests.push({ sent: [...sent], aborted: [...aborted] });
          }
        } finally {
          await tab.close();
        }
      }
      log(`${page.name}: ${withSpread(results[i]!.browserMs)} ms`);
    }
    const chromiumVersion = browser.version();

    const explains: ExplainSummary[] = [];
    for (const c of explainCases(ctx)) explains.push(await explain(client, RUNTIME_SRC, c));

    const report = {
      date: started.toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? "?", memoryGiB: Math.round(totalmem() / 2 ** 30), loadBefore, loadAfter: loadavg().map((l) => l.toFixed(1)).join(" ") },
      versions: { node: process.version, postgres: pgVersion, chromium: chromiumVersion },
      data: { dead: DEAD, completed: COMPLETED, queued: QUEUED, audit: AUDIT, counts, tableSize, seededMs: seeded },
      loads: LOADS,
      notes,
      pages: results,
      extras,
      explains,
    };
    const markdown = render(report);
    console.log(`\n${markdown}`);
    await mkdir(path.join(BENCH, "results"), { recursive: true });
    await writeFile(path.join(BENCH, "results", "dashboard-load.json"), JSON.stringify(report, null, 2));
    await writeFile(path.join(BENCH, "results", "dashboard-load.md"), markdown);
  } finally {
    await browser?.close().catch(() => undefined);
    await dashboard?.stop().catch(() => undefined);
    await service?.stop().catch(() => undefined);
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`).catch(() => undefined);
    await client.end();
  }
}

function render(report: {
  date: string;
  machine: { cpus: number; cpu: string; memoryGiB: number; loadBefore: string; loadAfter: string };
  versions: Record<string, string>;
  data: { counts: { state: string; n: number }[]; tableSize: string };
  loads: number;
  notes: string[];
  pages: PageResult[];
  extras: { name: string; procedure: string; ms: number[] }[];
  explains: ExplainSummary[];
}): string {
  const ms = (values: number[]) => `${Math.round(median(values))} ms`;
  const lines = [
    `${report.date.slice(0, 10)}, ${report.machine.cpus} × ${report.machine.cpu}, ${report.machine.memoryGiB} GiB; load ${report.machine.loadBefore} before, ${report.machine.loadAfter} after`,
    `Node ${report.versions.node}, PostgreSQL ${report.versions.postgres}, Chromium ${report.versions.chromium}; jfast_jobs: ${report.data.counts.map((c) => `${c.n} ${c.state}`).join(", ")} (${report.data.tableSize})`,
    ...report.notes.map((n) => `note: ${n}`),
    "",
    `| page | browser, median (min–max) of ${report.loads} | admin procedures, server side (median of ${report.loads}) | requests per load until shown (aborted) |`,
    "| --- | --- | --- | --- |",
    ...report.pages.map(
      (p) => `| ${p.name} | ${withSpread(p.browserMs)} ms${p.from === "click" ? " from the click" : ""} | ${p.calls.map((c) => `\`${c.procedure}\` ${ms(c.ms)}`).join(", ")} | ${requestsPerLoad(p.requests)} |`,
    ),
    "",
    "| other admin call | server side, median (min–max) |",
    "| --- | --- |",
    ...report.extras.map((e) => `| ${e.name} (\`${e.procedure}\`) | ${withSpread(e.ms)} ms |`),
    "",
    "| SQL | planning | execution | buffers hit/read | scans | seq scan of jfast_jobs |",
    "| --- | --- | --- | --- | --- | --- |",
    ...report.explains.map(
      (e) => `| ${e.label} (\`${path.basename(e.file)}\`) | ${e.planningMs.toFixed(2)} ms | ${e.executionMs.toFixed(2)} ms | ${e.sharedHit}/${e.sharedRead} | ${e.scans.join("; ")} | ${e.seqScanOfJobs ? "**yes**" : "no"} |`,
    ),
  ];
  return lines.join("\n") + "\n";
}

/** "queues.list 2 (1), overview.whoami 1": requests per load, averaged over the loads. */
function requestsPerLoad(loads: { sent: string[]; aborted: string[] }[]): string {
  const per = (lists: string[][]) => {
    const counts = new Map<string, number>();
    for (const list of lists) for (const p of list) counts.set(p, (counts.get(p) ?? 0) + 1);
    return counts;
  };
  const sent = per(loads.map((l) => l.sent));
  const aborted = per(loads.map((l) => l.aborted));
  const avg = (n: number) => String(Math.round((n / Math.max(1, loads.length)) * 10) / 10);
  return [...sent].map(([p, n]) => `${p} ${avg(n)}${aborted.get(p) ? ` (${avg(aborted.get(p)!)})` : ""}`).join(", ") || "—";
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
