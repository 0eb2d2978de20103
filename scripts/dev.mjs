#!/usr/bin/env node
// `npm run dev`: the two example services (`jfast dev`: each one's API and a worker) and the dashboard pointed
// at both. billing (apps/example) needs nothing installed; shipping (apps/shipping) needs Redis, and the two
// talk over Kafka. What is not running on this machine is turned off, with a line saying how to turn it on:
//   no Kafka broker  billing runs without its kafka plugin (JFAST_DISABLE_PLUGINS=kafka), shipping too
//   no Redis         shipping is not started
// The admin token, the dashboard's own token (a `dashboard` token: the services audit the person signed in) and
// the dashboard's sign-in (user "admin") are made up for this run and printed below. Ctrl-C stops everything.
// See docs/dashboard.md and docs/kafka.md.
//   node scripts/dev.mjs                 the dashboard's production build, as `jfast-dashboard` (npm run dev builds it)
//   node scripts/dev.mjs --dev           the dashboard with `next dev` (reloads on edits)
//   node scripts/dev.mjs --no-dashboard  the services only
// PORT and SHIPPING_PORT move the services, DASHBOARD_PORT the dashboard; KAFKA_BROKERS and REDIS_URL point
// at other servers than 127.0.0.1:9092 and 127.0.0.1:6379.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const billingDir = path.join(repo, "apps", "example");
const shippingDir = path.join(repo, "apps", "shipping");
const dashboardDir = path.join(repo, "apps", "dashboard");
const jfastBin = path.join(repo, "packages", "cli", "bin", "jfast.js");
const nextDev = process.argv.includes("--dev");
const withDashboard = !process.argv.includes("--no-dashboard");

const basePort = (dir, fallback) => /^\s*base_port\s*=\s*(\d+)/m.exec(readFileSync(path.join(dir, "jfast.toml"), "utf8"))?.[1] ?? fallback;
const billingPort = process.env.PORT ?? basePort(billingDir, "8000");
const shippingPort = process.env.SHIPPING_PORT ?? basePort(shippingDir, "8100");
const dashboardPort = process.env.DASHBOARD_PORT ?? "3000";
const token = randomBytes(18).toString("base64url");
const dashboardToken = randomBytes(18).toString("base64url");
const password = process.env.JFAST_DASHBOARD_PASSWORD ?? randomBytes(12).toString("base64url");

// The addresses both services' jfast.toml use ([plugin.kafka] host_port = 9092, [plugin.queue] url).
const kafkaBrokers = process.env.KAFKA_BROKERS?.trim() || "127.0.0.1:9092";
const redisUrl = process.env.REDIS_URL?.trim() || "redis://127.0.0.1:6379";

/** True when something accepts TCP connections at host:port within a second. */
function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000);
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

async function kafkaUp() {
  const brokers = kafkaBrokers.split(",").map((b) => b.trim()).filter(Boolean);
  const answers = await Promise.all(brokers.map((b) => reachable(b.slice(0, b.lastIndexOf(":")), b.slice(b.lastIndexOf(":") + 1))));
  return answers.some(Boolean);
}

async function redisUp() {
  try {
    const url = new URL(redisUrl);
    return await reachable(url.hostname || "127.0.0.1", url.port || "6379");
  } catch {
    return false;
  }
}

const [kafka, redis] = await Promise.all([kafkaUp(), redisUp()]);
const startShipping = redis;

const children = [];
function start(name, command, args, options) {
  // Own process group: Ctrl-C reaches the children once, through stop(), not a second time from the terminal
  // (a second signal tells `jfast dev` to stop waiting for running jobs).
  const child = spawn(command, args, { stdio: "inherit", detached: true, ...options });
  child.on("exit", (code, signal) => {
    if (stopping) return;
    console.error(`\n[dev] ${name} exited (${signal ?? code}); stopping the rest`);
    stop(code ?? 1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  const timer = setTimeout(() => process.exit(code), 30_000);
  timer.unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null))).then(() => process.exit(code));
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const adminTokens = `${process.env.JFAST_ADMIN_TOKENS ? `${process.env.JFAST_ADMIN_TOKENS},` : ""}dev:operator:${token},dev-dashboard:dashboard:${dashboardToken}`;
/** Kafka when a broker answers, else the kafka plugin turned off for this run (docs/kafka.md#turning-kafka-off). */
function kafkaEnv() {
  if (kafka) return { KAFKA_BROKERS: kafkaBrokers };
  const disabled = [process.env.JFAST_DISABLE_PLUGINS, "kafka"].filter(Boolean).join(",");
  return { JFAST_DISABLE_PLUGINS: disabled };
}

start("billing (apps/example)", process.execPath, [jfastBin, "dev"], {
  cwd: billingDir,
  env: { ...process.env, ...kafkaEnv(), PORT: billingPort, JFAST_ADMIN_TOKENS: adminTokens },
});
if (startShipping) {
  start("shipping (apps/shipping)", process.execPath, [jfastBin, "dev"], {
    cwd: shippingDir,
    env: { ...process.env, ...kafkaEnv(), PORT: shippingPort, REDIS_URL: redisUrl, JFAST_ADMIN_TOKENS: adminTokens },
  });
}

const services = [{ name: "billing", url: `http://127.0.0.1:${billingPort}`, token: dashboardToken }];
if (startShipping) services.push({ name: "shipping", url: `http://127.0.0.1:${shippingPort}`, token: dashboardToken });
const built = nextDev || existsSync(path.join(dashboardDir, "dist", "manifest.json"));
if (withDashboard && !built) {
  console.error("[dev] the dashboard is not built: run npm run dev (it builds it), npm run build -w @jfast/dashboard, or pass --dev for next dev");
  stop(1);
} else if (withDashboard) {
  // One user, "admin", with this run's password (the services see the actions as theirs: x-jfast-actor).
  const { hashPassword } = await import(path.join(dashboardDir, "lib", "passwords.mjs"));
  const users = JSON.stringify([{ name: "admin", role: "admin", passwordHash: await hashPassword(password) }]);
  const env = {
    ...process.env,
    JFAST_DASHBOARD_SERVICES: process.env.JFAST_DASHBOARD_SERVICES ?? JSON.stringify(services),
    JFAST_DASHBOARD_USERS: process.env.JFAST_DASHBOARD_USERS ?? users,
    JFAST_DASHBOARD_SECRET: process.env.JFAST_DASHBOARD_SECRET ?? randomBytes(32).toString("hex"),
    NEXT_TELEMETRY_DISABLED: "1",
  };
  delete env.JFAST_DASHBOARD_PASSWORD;
  if (nextDev) {
    start("the dashboard (next dev)", process.execPath, [path.join(repo, "node_modules", "next", "dist", "bin", "next"), "dev", "-p", dashboardPort, "-H", "127.0.0.1"], { cwd: dashboardDir, env });
  } else {
    start("the dashboard", process.execPath, [path.join(dashboardDir, "bin", "jfast-dashboard.mjs"), "--port", dashboardPort, "--host", "127.0.0.1"], { cwd: dashboardDir, env });
  }
}

const lines = [`[dev] billing     http://127.0.0.1:${billingPort}   (/ready, /queue/stats, admin API at /jfast/admin)`];
if (startShipping) lines.push(`[dev] shipping    http://127.0.0.1:${shippingPort}   (GET /shipments; jobs on Redis at ${redisUrl})`);
lines.push(
  withDashboard
    ? `[dev] dashboard   http://127.0.0.1:${dashboardPort}   sign in: admin / ${password}   (${nextDev ? "next dev" : "production build"}; services: ${services.map((s) => s.name).join(", ")})`
    : `[dev] dashboard   not started (--no-dashboard); it would show: ${services.map((s) => s.name).join(", ")}`,
);
lines.push(`[dev] admin API   Authorization: Bearer ${token}   (operator, on every service above; e.g. curl -H "Authorization: Bearer ${token}" http://127.0.0.1:${billingPort}/jfast/admin/overview.get)`);
lines.push(
  kafka
    ? `[dev] kafka       ${kafkaBrokers}: paying an invoice in billing ships it in shipping`
    : `[dev] kafka is off: no broker at ${kafkaBrokers}, so billing${startShipping ? " and shipping run" : " runs"} without the kafka plugin and paid invoices are not shipped. Turn it on: bash docker/kafka/start.sh, then restart npm run dev`,
);
if (!startShipping) {
  lines.push(`[dev] shipping is off: it keeps its jobs in Redis and nothing answers at ${redisUrl}. Turn it on: start Redis (redis-server, or docker compose -f docker/compose.yml up -d redis), then restart npm run dev`);
}
console.log(`\n${lines.join("\n")}\n`);
