#!/usr/bin/env node
// `npm run dev`: the example service (`jfast dev`: its API and a worker) and the dashboard pointed at it.
// The admin token and the dashboard password are made up for this run and printed below, unless
// JFAST_DASHBOARD_PASSWORD is set. Ctrl-C stops both. See docs/dashboard.md.
//   node scripts/dev.mjs            dashboard with `next dev` (reloads on edits)
//   node scripts/dev.mjs --prod     dashboard with `next start` (needs `npm run build -w @jfast/dashboard`)
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const example = path.join(repo, "apps", "example");
const dashboardDir = path.join(repo, "apps", "dashboard");
const prod = process.argv.includes("--prod");

const basePort = /^\s*base_port\s*=\s*(\d+)/m.exec(readFileSync(path.join(example, "jfast.toml"), "utf8"))?.[1] ?? "8000";
const servicePort = process.env.PORT ?? basePort;
const dashboardPort = process.env.DASHBOARD_PORT ?? "3000";
const token = randomBytes(18).toString("base64url");
const password = process.env.JFAST_DASHBOARD_PASSWORD ?? randomBytes(9).toString("base64url");

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

start("the example service", process.execPath, [path.join(repo, "packages", "cli", "bin", "jfast.js"), "dev"], {
  cwd: example,
  env: { ...process.env, PORT: servicePort, JFAST_ADMIN_TOKENS: `${process.env.JFAST_ADMIN_TOKENS ? `${process.env.JFAST_ADMIN_TOKENS},` : ""}dev:operator:${token}` },
});
start("the dashboard", process.execPath, [path.join(repo, "node_modules", "next", "dist", "bin", "next"), prod ? "start" : "dev", "-p", dashboardPort, "-H", "127.0.0.1"], {
  cwd: dashboardDir,
  env: {
    ...process.env,
    JFAST_DASHBOARD_SERVICES: process.env.JFAST_DASHBOARD_SERVICES ?? JSON.stringify([{ name: "billing", url: `http://127.0.0.1:${servicePort}`, token }]),
    JFAST_DASHBOARD_PASSWORD: password,
    NEXT_TELEMETRY_DISABLED: "1",
  },
});

console.log(`
[dev] example service   http://127.0.0.1:${servicePort}   (/ready, /queue/stats, admin API at /jfast/admin)
[dev] dashboard         http://127.0.0.1:${dashboardPort}  password: ${password}
`);
