/**
 * The example service (apps/example) as it runs in production terms: its API (`jfast dev --no-worker`), a
 * worker (`jfast worker`) and the dashboard's production build, each its own process with the memory sampler
 * loaded, on a PostgreSQL database of their own; the dashboard reaches the API through a byte-counting proxy.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startByteProxy, type ByteProxy } from "./byte-proxy.js";

export const BENCH = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const REPO = path.dirname(BENCH);
const SAMPLER = path.join(BENCH, "memory", "sampler.mjs");
const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface StackOptions {
  /** Where the runtime, CLI and example come from (the checkout, or a worktree of an older commit). */
  repo?: string;
  /** The dashboard directory whose bin/ and dist/ serve it. */
  dashboardDir?: string;
  runDir: string;
  apiPort: number;
  dashboardPort: number;
  worker?: boolean;
  dashboard?: boolean;
  /** Force a GC before each memory sample (heap after GC); off where latency is measured. */
  gc?: boolean;
  sampleMs?: number;
  /** Extra environment for the API and the worker. */
  env?: Record<string, string>;
}

export interface Stack {
  api: string;
  dashboard: string | null;
  /** The dashboard's session cookie (signed in as admin). */
  cookie: string | null;
  operatorToken: string;
  proxy: ByteProxy | null;
  samplesFile: string;
  database: string;
  pids: Record<string, number>;
  /** Starts or stops the dashboard (it polls the API only while a browser listens). */
  startDashboard(): Promise<void>;
  stopDashboard(): Promise<void>;
  stop(): Promise<void>;
}

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

export async function startStack(options: StackOptions): Promise<Stack> {
  const repo = options.repo ?? REPO;
  const dashboardDir = options.dashboardDir ?? path.join(repo, "apps", "dashboard");
  await mkdir(options.runDir, { recursive: true });
  const suffix = randomBytes(4).toString("hex");
  const database = `jfast_bench_mem_${suffix}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const databaseUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${database}`);
  const dashboardToken = `bench-dashboard-${randomBytes(12).toString("hex")}`;
  const operatorToken = `bench-operator-${randomBytes(12).toString("hex")}`;
  const samplesFile = path.join(options.runDir, "samples.jsonl");
  const children = new Map<string, ChildProcess>();

  const sampled = (role: string) => ({
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${SAMPLER}`.trim(),
    JFAST_MEM_SAMPLES: samplesFile,
    JFAST_MEM_ROLE: role,
    JFAST_MEM_SAMPLE_MS: String(options.sampleMs ?? 30_000),
    JFAST_MEM_GC: options.gc ? "1" : "0",
  });
  const serviceEnv = (role: string) => ({
    ...process.env,
    ...sampled(role),
    PORT: String(options.apiPort),
    DATABASE_URL: databaseUrl,
    JFAST_DISABLE_PLUGINS: "kafka",
    JFAST_ADMIN_TOKENS: `bench-dashboard:dashboard:${dashboardToken},bench-operator:operator:${operatorToken}`,
    ...options.env,
  });
  const launch = (role: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) => {
    const out = createWriteStream(path.join(options.runDir, `${role}.log`));
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    children.set(role, child);
    return child;
  };
  const jfast = path.join(repo, "packages", "cli", "bin", "jfast.js");
  const example = path.join(repo, "apps", "example");

  const api = `http://127.0.0.1:${options.apiPort}`;
  launch("api", process.execPath, [jfast, "dev", "--no-worker"], example, serviceEnv("api"));
  await waitFor(`${api}/ready`, 90_000, children.get("api")!);
  log(`API up at ${api} (database ${database})`);
  if (options.worker !== false) {
    launch("worker", process.execPath, [jfast, "worker"], example, serviceEnv("worker"));
    log("worker started");
  }

  let proxy: ByteProxy | null = null;
  let dashboard: string | null = null;
  let cookie: string | null = null;
  const password = `bench-${randomBytes(6).toString("hex")}`;
  const dashboardUrl = `http://127.0.0.1:${options.dashboardPort}`;
  const startDashboard = async () => {
    proxy ??= await startByteProxy({ host: "127.0.0.1", port: options.apiPort });
    const { hashPassword } = (await import(path.join(REPO, "apps", "dashboard", "lib", "passwords.mjs"))) as { hashPassword(p: string): Promise<string> };
    const config = path.join(options.runDir, "dashboard.json");
    await writeFile(
      config,
      JSON.stringify({
        services: [{ name: "billing", url: `http://127.0.0.1:${proxy.port}`, token: dashboardToken }],
        users: [{ name: "admin", role: "admin", passwordHash: await hashPassword(password) }],
      }),
    );
    const child = launch("dashboard", process.execPath, [path.join(dashboardDir, "bin", "jfast-dashboard.mjs"), "--config", config, "--port", String(options.dashboardPort), "--host", "127.0.0.1"], dashboardDir, {
      ...process.env,
      ...sampled("dashboard"),
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      JFAST_DASHBOARD_SECRET: randomBytes(32).toString("hex"),
    });
    await waitFor(`${dashboardUrl}/login`, 60_000, child);
    const login = await fetch(`${dashboardUrl}/api/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: dashboardUrl },
      body: new URLSearchParams({ name: "admin", password }),
    });
    const setCookie = login.headers.get("set-cookie");
    if (!setCookie) throw new Error(`signing in to the dashboard answered ${login.status} without a cookie: ${await login.text()}`);
    cookie = setCookie.split(";")[0]!;
    dashboard = dashboardUrl;
    stack.dashboard = dashboard;
    stack.cookie = cookie;
    stack.pids.dashboard = child.pid!;
    log(`dashboard up at ${dashboardUrl}, signed in`);
  };
  const stopChild = async (role: string) => {
    const child = children.get(role);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid!, "SIGTERM");
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }, 15_000);
    await exited;
    clearTimeout(timer);
  };

  const stack: Stack = {
    api,
    dashboard,
    cookie,
    operatorToken,
    proxy,
    samplesFile,
    database,
    pids: Object.fromEntries([...children].map(([role, child]) => [role, child.pid!])),
    async startDashboard() {
      await startDashboard();
      stack.proxy = proxy;
    },
    async stopDashboard() {
      await stopChild("dashboard");
      stack.dashboard = null;
    },
    async stop() {
      for (const role of ["dashboard", "worker", "api"]) await stopChild(role);
      await proxy?.close();
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.end();
    },
  };
  if (options.dashboard) await stack.startDashboard();
  return stack;
}

async function waitFor(url: string, timeoutMs: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode} before it answered`);
    const status = await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s (last status ${status})`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** RSS of a process from /proc (the sampler reports every 30 s; this reads it now). */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

export interface Enqueuer {
  sent(): number;
  accepted(): number;
  failed(): number;
  /** Latencies in ms from each request's scheduled send time (open loop: no coordinated omission). */
  latencies(): number[];
  resetLatencies(): void;
  /**
   * Stops sending and waits up to `maxWaitMs` for the answers still due; those that do not come are abandoned
   * (their latency counted as the time waited, a lower bound). Returns how many were abandoned.
   */
  stop(maxWaitMs?: number): Promise<number>;
}

/**
 * POST /receipts at a fixed rate, whatever the answers take (open loop): each request's latency counts from
 * the time it was due, so a stall shows in the figures instead of slowing the sender. One receipt in `deadEvery`
 * has no total: it fails its three attempts and becomes a dead letter.
 */
export function startEnqueuer(api: string, params: { perSecond: number; deadEvery?: number; tenants?: number }): Enqueuer {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL("/receipts", api);
  let sent = 0;
  let accepted = 0;
  let failed = 0;
  let inFlight = 0;
  const pending = new Set<http.ClientRequest>();
  let latencies: number[] = [];
  const started = performance.now();
  const interval = 1000 / params.perSecond;
  let stopped = false;
  // Set once the answers still missing are abandoned: nothing after that counts, and nothing more is sent.
  let abandonedAll = false;
  const one = (due: number, n: number) => {
    const dead = params.deadEvery && n % params.deadEvery === 0;
    const body = JSON.stringify({ text: dead ? `illegible receipt ${n}` : `Coffee x2\nTOTAL: $${(n % 5000) + 1}.50` });
    inFlight += 1;
    const request: http.ClientRequest = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-tenant-id": `tenant-${n % (params.tenants ?? 20)}` } },
      (response) => {
        response.resume();
        response.on("end", () => {
          pending.delete(request);
          if (stopped && abandonedAll) return;
          inFlight -= 1;
          latencies.push(performance.now() - due);
          if (response.statusCode === 202) accepted += 1;
          else failed += 1;
        });
      },
    );
    pending.add(request);
    request.on("error", () => {
      pending.delete(request);
      if (stopped && abandonedAll) return;
      inFlight -= 1;
      failed += 1;
      latencies.push(performance.now() - due);
    });
    request.end(body);
  };
  // A timer every 5 ms sends every request that came due since the last one, each stamped with its due time.
  const timer = setInterval(() => {
    if (stopped) return;
    const now = performance.now();
    while (started + sent * interval <= now) {
      one(started + sent * interval, sent);
      sent += 1;
    }
  }, 5);
  return {
    sent: () => sent,
    accepted: () => accepted,
    failed: () => failed,
    latencies: () => latencies,
    resetLatencies: () => {
      latencies = [];
    },
    async stop(maxWaitMs = Number.POSITIVE_INFINITY) {
      stopped = true;
      clearInterval(timer);
      const deadline = performance.now() + maxWaitMs;
      while (inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const abandoned = inFlight;
      if (abandoned > 0) {
        // Every request not yet answered waited at least until now since it was due.
        const now = performance.now();
        for (let n = sent - abandoned; n < sent; n++) latencies.push(now - (started + n * interval));
      }
      abandonedAll = true;
      // Requests queued in the agent would otherwise still go out on new sockets after destroy().
      for (const request of pending) request.destroy();
      agent.destroy();
      return abandoned;
    },
  };
}
