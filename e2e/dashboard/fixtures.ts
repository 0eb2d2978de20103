import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, type BrowserContext, type Page } from "@playwright/test";
import amqp from "amqplib";
import { Redis } from "ioredis";
import pg from "pg";
import { eventually } from "@jfast/runtime/testing";

export const E2E_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const REPO = path.dirname(E2E_DIR);
export const DASHBOARD_DIR = path.join(REPO, "apps", "dashboard");
export const SCREENSHOTS = path.join(REPO, "docs", "screenshots");
export const PG_URL = "postgres://postgres@127.0.0.1:5432/test";
export const KAFKA_BROKERS = "127.0.0.1:9092";

const KAFKA_HANDLER = `\nexport const routeParcel = on("parcels", async (event) => {\n  if (event.type === "parcel.poison") throw new Error(\`cannot route parcel \${event.data.id}\`);\n  if (event.type !== "parcel.sent") return;\n});\n`;
/** Read by the contracts checker only (no task runs it): this service publishes parcel.sent to "parcels". */
const PARCEL_PUBLISHER = `import { Event } from "@jfast/runtime";\n\nexport async function dispatch(events, parcel) {\n  await events.publish("parcels", new Event({ type: "parcel.sent", data: parcel, key: parcel.id }));\n}\n`;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** The packages as a team outside this repository gets them: packed, installed in a folder of their own. */
export interface Installed {
  dir: string;
  /** node_modules/.bin/jfast-dashboard of the installed @jfast/dashboard. */
  bin: string;
  /** The installed package's size on disk, in bytes (the dashboard alone). */
  dashboardBytes: number;
  cleanup(): Promise<void>;
}

/** Runs a command to completion with the outer npm's settings removed, so the folder installs as its own project. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== "INIT_CWD" && key !== "NODE_PATH"));
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(" ")} failed (${code}):\n${stdout}\n${stderr}`))));
  });
}

/**
 * Packs @jfast/dashboard and @jfast/runtime (npm pack) and installs both in a temporary folder, with TypeScript (the
 * contracts checker's parser, which a service needs installed for its contracts graph) and the drivers
 * the fixture services use; the services and the dashboard then run from there, not from the workspace.
 */
export async function installPackages(): Promise<Installed> {
  if (!existsSync(path.join(DASHBOARD_DIR, "dist", "manifest.json"))) {
    throw new Error("the dashboard is not built: run `npm run build` (or `npm run build -w @jfast/dashboard`) before the e2e suite");
  }
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-dashboard-e2e-"));
  const tarball = async (pkg: string) => {
    // npm prints the prepack script's banner before the JSON.
    const out = await run("npm", ["pack", "--pack-destination", dir, "--json"], path.join(REPO, pkg));
    const [{ filename }] = JSON.parse(out.slice(out.indexOf("["))) as [{ filename: string }];
    return path.join(dir, filename);
  };
  const [dashboard, runtime] = [await tarball("apps/dashboard"), await tarball("packages/runtime")];
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "dashboard-e2e", private: true, type: "module" }));
  await run("npm", ["install", "--no-audit", "--no-fund", "--legacy-peer-deps", dashboard, runtime, "pg@8.23.1", "drizzle-orm@0.45.4", "kafkajs@2.2.4", "ioredis@5.9.2", "amqplib@2.3.1", "typescript@5.9.3"], dir);
  await copyFile(path.join(E2E_DIR, "dashboard", "fixture-service.mjs"), path.join(dir, "fixture-service.mjs"));
  const dashboardBytes = Number((await run("du", ["-sb", path.join(dir, "node_modules", "@jfast", "dashboard")], dir)).split(/\s/)[0]);
  return { dir, bin: path.join(dir, "node_modules", ".bin", "jfast-dashboard"), dashboardBytes, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The workspace's own build (apps/dashboard/dist) run by the package's binary, as the bench does. */
export function workspaceDashboard(): Installed {
  return { dir: DASHBOARD_DIR, bin: path.join(DASHBOARD_DIR, "bin", "jfast-dashboard.mjs"), dashboardBytes: 0, cleanup: async () => {} };
}

export interface Running {
  name: string;
  url: string;
  process: ChildProcess;
  output: () => string;
  /** Stops the process (SIGTERM) and keeps what it needs to start again. */
  halt(): Promise<void>;
  /** Starts it again on the same address, as it was started (the memory backend comes back empty). */
  restart(): Promise<void>;
  /** Stops it for good and removes what it was given. */
  stop(): Promise<void>;
  /** A service with the database plugin: its schema in PG_URL's database. */
  schema?: string;
}

/** Starts a process, keeps its output for failure messages, and waits until `ready(url)` answers. */
async function startProcess(params: { name: string; command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv; url: string; readyPath: string; timeoutMs: number; cleanup?: () => Promise<void> }): Promise<Running> {
  let output = "";
  let child!: ChildProcess;
  let exited!: Promise<number | null>;
  const launch = async () => {
    child = spawn(params.command, params.args, { cwd: params.cwd, env: params.env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const deadline = Date.now() + params.timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${params.name} exited with ${child.exitCode} before it was ready:\n${output}`);
      try {
        const response = await fetch(params.url + params.readyPath, { signal: AbortSignal.timeout(2000) });
        if (response.status < 500 || response.status === 503) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`${params.name} did not answer ${params.readyPath} within ${params.timeoutMs} ms:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const halt = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  await launch();
  return {
    name: params.name,
    url: params.url,
    get process() {
      return child;
    },
    output: () => output,
    halt,
    async restart() {
      await halt();
      await launch();
    },
    async stop() {
      await halt();
      await params.cleanup?.();
    },
  };
}

export type FixtureBackend = "memory" | "postgres" | "redis" | "rabbitmq";
export const REDIS_URL = "redis://127.0.0.1:6379";
export const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

/**
 * One fixture service, on the memory backend or on a real PostgreSQL (its own schema), Redis (its own queue, so
 * its own keys) or RabbitMQ (its own broker queues): a task that fails until fixed, a subscriber, and a
 * contracts.toml the checker reads. On PostgreSQL it runs the scheduler and the outbox; elsewhere `database`
 * adds the database plugin (and the outbox), `scheduler` the scheduler, and `schedules` more declarations to
 * the tasks file.
 */
export async function startService(params: {
  installed: Installed;
  name: string;
  backend: FixtureBackend;
  tokens: string;
  kafka?: boolean;
  database?: boolean;
  scheduler?: boolean;
  schedules?: string;
  /** Its modules publish parcel.sent to the "parcels" topic (the contracts graph joins it to a Kafka handler). */
  publishesParcels?: boolean;
}): Promise<Running> {
  const suffix = randomBytes(4).toString("hex");
  // Under the install folder: the service's modules import the installed @jfast/runtime.
  const root = path.join(params.installed.dir, "services", `${params.name}-${suffix}`);
  const schema = `jfast_e2e_${params.name}_${suffix}`;
  const queueName = `jfast-e2e.${params.name}.${suffix}`;
  await mkdir(path.join(root, "modules", params.name), { recursive: true });
  await mkdir(path.join(root, "modules", "alert"), { recursive: true });
  const hasDatabase = params.backend === "postgres" || params.database === true;
  // The PostgreSQL service also runs the scheduler, with one nightly schedule (its next ticks fill the schedules page),
  // and the outbox, whose dead rows the outbox page shows.
  const scheduler = params.backend === "postgres" || params.scheduler === true;
  const broker =
    params.backend === "redis" ? `url = "${REDIS_URL}"\nname = "${queueName}"\n` : params.backend === "rabbitmq" ? `url = "${AMQP_URL}"\nname = "${queueName}"\n` : "";
  const queue = `[plugin.queue]\nbackend = "${params.backend}"\n${broker}max_attempts = 2\nbackoff_base = 0.05\npoll_interval = 0.2\n${scheduler ? "scheduler = true\n" : ""}`;
  // With Kafka, the service consumes the "parcels" topic (under a prefix of its own on the shared broker); a
  // "parcel.poison" event makes its handler throw, which blocks that partition.
  const events = params.kafka ? `[plugin.kafka]\nbootstrap_servers = "${KAFKA_BROKERS}"\ntopic_prefix = "jfast-e2e-dashboard-${suffix}."\n\n` : "";
  const database = hasDatabase ? `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n` : "";
  const plugins = [...(hasDatabase ? ["database"] : []), "queue", ...(hasDatabase ? ["outbox"] : []), ...(params.kafka ? ["kafka"] : [])];
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "${params.name}"\nenvironment = "development"\n\n[plugins]\nenabled = [${plugins.map((p) => `"${p}"`).join(", ")}]\n\n${database}${events}${queue}${hasDatabase ? "\n[plugin.outbox]\npoll_interval = 0.2\n" : ""}\n[admin]\nredact = ["card_number"]\n`,
  );
  await writeFile(
    path.join(root, "contracts.toml"),
    `[modules.${params.name}]\npublishes = ["receipt.registered"${params.publishesParcels ? ', "parcel.sent"' : ""}]\n\n[modules.alert]\ndepends_on = []\n`,
  );
  await writeFile(
    path.join(root, "modules", params.name, "tasks.mjs"),
    `import { Event, on, schedule, task } from "@jfast/runtime";\n\nclass CardDeclined extends Error {\n  name = "CardDeclined";\n}\n\nexport const charge = task("${params.name}.charge", async (payload, tools) => {\n  // Kept with the attempt (docs/jobs.md#logs): the job drawer's timeline shows it.\n  tools.log?.info("charging", { invoice: payload.invoice });\n  if (globalThis.__fixtureBroken) throw new CardDeclined(\`card declined for invoice \${payload.invoice}\`);\n  void new Event({ type: "receipt.registered", data: payload });\n});\n\nexport const ping = task("${params.name}.ping", async (payload, tools) => {\n  // POST /nap: a job that runs a while, 40 % done, for the Workers page.\n  if (!payload?.napMs) return;\n  tools.progress?.(40);\n  await new Promise((resolve) => setTimeout(resolve, payload.napMs));\n});\n${params.kafka ? KAFKA_HANDLER : ""}${scheduler ? `\nexport const nightly = schedule("${params.name}.ping", { cron: "30 3 * * *", timezone: "America/Mexico_City", name: "nightly-ping", catchUp: false });\n` : ""}${params.schedules ?? ""}`,
  );
  if (params.publishesParcels) await writeFile(path.join(root, "modules", params.name, "dispatch.mjs"), PARCEL_PUBLISHER);
  await writeFile(
    path.join(root, "modules", "alert", "tasks.mjs"),
    // receipt.voided is published by no module: the contracts checker reports an orphan subscription.
    `import { subscribe } from "@jfast/runtime";\n\nexport const checkBudget = subscribe("receipt.registered", async () => {});\n\nexport const refundBudget = subscribe("receipt.voided", async () => {});\n`,
  );
  const port = await freePort();
  const running = await startProcess({
    name: params.name,
    command: process.execPath,
    args: [path.join(params.installed.dir, "fixture-service.mjs")],
    cwd: root,
    env: { ...process.env, FIXTURE_ROOT: root, PORT: String(port), JFAST_ADMIN_TOKENS: params.tokens, NODE_ENV: "development" },
    url: `http://127.0.0.1:${port}`,
    readyPath: "/ready",
    timeoutMs: 60_000,
    async cleanup() {
      await rm(root, { recursive: true, force: true });
      if (hasDatabase) {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
      if (params.backend === "redis") await dropRedisQueue(queueName);
      if (params.backend === "rabbitmq") await dropRabbitQueue(queueName);
    },
  });
  if (hasDatabase) running.schema = schema;
  return running;
}

/** Deletes every key of one Redis queue (they all carry its hash tag) and its schedule claims. */
async function dropRedisQueue(queue: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  try {
    for (const pattern of [`*{${queue}}*`, `*${queue}*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}

/**
 * Deletes one RabbitMQ queue's broker objects: the work queue, its dead letters and its delay cascade. Exchanges
 * go one at a time, top level first: RabbitMQ 3.10 can crash a channel when two exchanges bound to each other
 * are deleted at the same moment.
 */
async function dropRabbitQueue(queue: string, levels = 25): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  connection.on("error", () => undefined);
  const levelNames = Array.from({ length: levels }, (_, level) => `${queue}.delay.${level}`);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => undefined);
    for (const name of [queue, `${queue}.dead`, ...levelNames]) await channel.deleteQueue(name);
    for (const name of levelNames.reverse()) await channel.deleteExchange(name);
    await channel.close();
  } finally {
    await connection.close().catch(() => undefined);
  }
}

export interface DashboardSettings {
  services: { name: string; url: string; token: string }[];
  /** The single shared password of earlier versions (user "admin"). */
  password?: string;
  users?: { name: string; role: "viewer" | "operator" | "admin"; passwordHash: string }[];
  proxyAuth?: Record<string, unknown>;
  traceUrl?: string;
}

/** The installed package's `jfast-dashboard` binary: services and users in a config file, the secret in the environment. */
export async function startDashboard(installed: Installed, settings: DashboardSettings): Promise<Running & { startMs: number }> {
  const port = await freePort();
  const config = path.join(tmpdir(), `jfast-dashboard-${port}-${randomBytes(4).toString("hex")}.json`);
  await writeFile(config, JSON.stringify({ services: settings.services, users: settings.users ?? [], ...(settings.proxyAuth ? { proxyAuth: settings.proxyAuth } : {}) }));
  const began = Date.now();
  const running = await startProcess({
    name: "dashboard",
    command: installed.bin,
    args: ["--config", config, "--port", String(port), "--host", "127.0.0.1"],
    cwd: installed.dir,
    env: {
      ...process.env,
      NODE_ENV: "production",
      JFAST_DASHBOARD_SECRET: randomBytes(32).toString("hex"),
      ...(settings.password ? { JFAST_DASHBOARD_PASSWORD: settings.password } : {}),
      ...(settings.traceUrl ? { JFAST_DASHBOARD_TRACE_URL: settings.traceUrl } : {}),
    },
    url: `http://127.0.0.1:${port}`,
    readyPath: "/login",
    timeoutMs: 60_000,
    cleanup: () => rm(config, { force: true }),
  });
  return { ...running, startMs: Date.now() - began };
}

/**
 * Every page of `context` waits, after `goto` and `reload`, until React runs it (`<html data-hydrated>`). Pages
 * arrive with their data in the HTML, so a row can be on screen before its buttons work; a click in between
 * would be lost, as a person's would. A context with scripts off must not use this.
 */
export function waitForHydration<T extends BrowserContext>(context: T): T {
  context.on("page", (page) => {
    const settle = () => page.locator("html[data-hydrated]").waitFor({ state: "attached", timeout: 60_000 });
    const goto = page.goto.bind(page);
    const reload = page.reload.bind(page);
    page.goto = async (...args: Parameters<Page["goto"]>) => {
      const response = await goto(...args);
      await settle();
      return response;
    };
    page.reload = async (...args: Parameters<Page["reload"]>) => {
      const response = await reload(...args);
      await settle();
      return response;
    };
  });
  return context;
}

/** Calls an admin procedure of a service directly (not through the dashboard), as an operator script would. */
export async function adminCall(service: string, token: string, procedure: string, input?: unknown, mutation = false): Promise<{ status: number; body: any }> {
  const url = `${service}/jfast/admin/${procedure}${!mutation && input !== undefined ? `?input=${encodeURIComponent(JSON.stringify(input))}` : ""}`;
  const response = await fetch(url, {
    method: mutation ? "POST" : "GET",
    headers: { authorization: `Bearer ${token}`, ...(mutation ? { "content-type": "application/json" } : {}) },
    ...(mutation ? { body: JSON.stringify(input ?? null) } : {}),
  });
  return { status: response.status, body: await response.json() };
}

export async function queueStats(service: string): Promise<{ depths: { ready: number; scheduled: number; running: number; dead: number } }> {
  const response = await fetch(`${service}/queue/stats`);
  return (await response.json()) as never;
}

export { eventually };

/**
 * The tokens the fixture services accept: the dashboard holds an operator token for billing and a viewer token
 * for shipping, so both roles are on screen at once; the others are for calls made directly, as a script would.
 */
const STAMP = Date.now();
export const TOKENS = {
  billingOperator: `operator-${STAMP}-billing`,
  billingViewer: `viewer-${STAMP}-billing`,
  /** A dashboard's token (billing's `console:dashboard:…`): billing audits the person the dashboard names. */
  billingDashboard: `dashboard-${STAMP}-billing`,
  shippingOperator: `operator-${STAMP}-shipping`,
  shippingViewer: `viewer-${STAMP}-shipping`,
};
export const PASSWORD = "correct horse battery staple";
export const TRACE_URL = "http://127.0.0.1:16686/trace/{traceId}";

export interface Stack {
  installed: Installed;
  billing: Running;
  shipping: Running;
  dashboard: Running;
}

/**
 * Playwright's `test` with the suite's services, started once per worker: billing on PostgreSQL, shipping on the
 * memory backend consuming a Kafka topic, 3 and 2 dead letters made for real, and the dashboard in front of both.
 * `session` is the browser context the tests share (the login test signs it in); `baseURL` is the dashboard.
 */
export const test = base.extend<{}, { stack: Stack; session: BrowserContext }>({
  stack: [
    async ({}, use) => {
      await mkdir(SCREENSHOTS, { recursive: true });
      const started: Running[] = [];
      const installed = await installPackages();
      try {
        const [billing, shipping] = await Promise.all([
          startService({ installed, name: "billing", backend: "postgres", publishesParcels: true, tokens: `ops:operator:${TOKENS.billingOperator},viewer:${TOKENS.billingViewer},console:dashboard:${TOKENS.billingDashboard}` }).then((r) => (started.push(r), r)),
          startService({ installed, name: "shipping", backend: "memory", kafka: true, tokens: `ops:operator:${TOKENS.shippingOperator},dashboard:viewer:${TOKENS.shippingViewer}` }).then((r) => (started.push(r), r)),
        ]);
        // The shared password of earlier versions: one user, "admin" (people.spec.ts starts dashboards with named users).
        const dashboard = await startDashboard(installed, {
          password: PASSWORD,
          traceUrl: TRACE_URL,
          services: [
            { name: "billing", url: billing.url, token: TOKENS.billingOperator },
            { name: "shipping", url: shipping.url, token: TOKENS.shippingViewer },
          ],
        });
        started.push(dashboard);
        // Dead letters made for real: jobs whose handler throws until its bug is fixed, out of attempts.
        await fetch(`${billing.url}/fail?count=3`, { method: "POST" });
        await fetch(`${shipping.url}/fail?count=2`, { method: "POST" });
        await eventually("3 dead letters in billing", async () => (await queueStats(billing.url)).depths.dead === 3);
        await eventually("2 dead letters in shipping", async () => (await queueStats(shipping.url)).depths.dead === 2);
        await use({ installed, billing, shipping, dashboard });
      } finally {
        await Promise.all(started.map((r) => r.stop()));
        await installed.cleanup();
      }
    },
    { scope: "worker", timeout: 420_000 },
  ],
  session: [
    async ({ browser, stack }, use) => {
      const context = waitForHydration(await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: stack.dashboard.url }));
      await use(context);
      await context.close();
    },
    { scope: "worker" },
  ],
  baseURL: async ({ stack }, use) => use(stack.dashboard.url),
});

/** `jfast-dashboard hash-password`, the password on stdin, as a script would run it. */
export function hashPassword(installed: Installed, password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(installed.bin, ["hash-password"], { cwd: installed.dir, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`hash-password failed (${code}): ${err}`))));
    // A child that exits before reading its stdin fails the write with EPIPE; its exit code and stderr above say why.
    child.stdin.on("error", () => undefined);
    child.stdin.end(`${password}\n`);
  });
}
