#!/usr/bin/env node
// jfast-dashboard: serves the dashboard's production build (Next.js standalone output, in dist/) configured by
// flags, environment variables or a JSON file; `jfast-dashboard hash-password` makes a user's password hash.
// Everything it accepts is in docs/dashboard.md (shipped as dist/dashboard.md).
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { DashboardConfigError, resolveConfig } from "../lib/config.mjs";
import { hashPassword } from "../lib/passwords.mjs";
import { DIST, MissingBuildError, startDashboardServer } from "../lib/server.mjs";

const started = performance.now();
const PACKAGE = path.dirname(DIST);
const { version } = JSON.parse(readFileSync(path.join(PACKAGE, "package.json"), "utf8"));

const HELP = `jfast-dashboard ${version}: the jfast dashboard, watching the admin APIs of jfast services

Usage:
  jfast-dashboard [--config <file>] [--port <port>] [--host <address>] [--base-path <path>]
  jfast-dashboard hash-password        reads a password (prompted, or from stdin) and prints its scrypt hash

Options:
  -c, --config <file>   JSON config file: services, users, secret, proxyAuth, listen, sessionHours, traceUrl
                        (or JFAST_DASHBOARD_CONFIG)
  -p, --port <port>     listen on this port (or PORT; default 3000)
  -H, --host <address>  listen on this address (or HOST; default 0.0.0.0)
  --base-path <path>    serve under this path, e.g. /ops behind a proxy that forwards /ops/* unchanged
                        (or JFAST_DASHBOARD_BASE_PATH; default: the root)
  -h, --help            this text
  -v, --version         the version

Environment (over the file, under the flags):
  JFAST_DASHBOARD_SERVICES   JSON array of { name, url, token }: the services and the admin token for each
  JFAST_DASHBOARD_USERS      JSON array of { name, role: viewer|operator|admin, passwordHash }
  JFAST_DASHBOARD_SECRET     signs session cookies; required (at least 32 characters) unless NODE_ENV=development
  JFAST_DASHBOARD_PASSWORD   a single shared password: one user named "admin" (as earlier versions had)
  JFAST_DASHBOARD_PROXY_AUTH JSON { trustedProxies, userHeader, emailHeader, secretHeader, secret, roles, defaultRole }
  JFAST_DASHBOARD_TRACE_URL  link to a trace, with {traceId}
  JFAST_DASHBOARD_SESSION_HOURS  how long a session lasts (default 12)

Docs: ${path.join(DIST, "dashboard.md")}
      (also \`jfast docs dashboard\` with @jfast/cli, or docs/dashboard.md in the jfast repository)
`;

function parseFlags(argv) {
  const flags = {};
  const names = { "-c": "config", "--config": "config", "-p": "port", "--port": "port", "-H": "host", "--host": "host", "--base-path": "basePath" };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [key, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    if (names[key]) {
      const value = inline ?? argv[++i];
      if (value === undefined) fail(`${key} needs a value`, "jfast-dashboard --help");
      flags[names[key]] = value;
    } else rest.push(arg);
  }
  return { flags, rest };
}

function fail(message, hint) {
  process.stderr.write(`jfast-dashboard: ${message}${hint ? `\n  fix: ${hint}` : ""}\n`);
  process.exit(2);
}

async function readPassword() {
  if (!process.stdin.isTTY) {
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    return input.replace(/\r?\n$/, "");
  }
  const ask = (prompt) =>
    new Promise((resolve) => {
      process.stderr.write(prompt);
      let typed = "";
      process.stdin.setRawMode(true);
      process.stdin.resume();
      const onData = (data) => {
        for (const ch of data.toString("utf8")) {
          if (ch === "\r" || ch === "\n") {
            process.stdin.setRawMode(false);
            process.stdin.pause();
            process.stdin.off("data", onData);
            process.stderr.write("\n");
            resolve(typed);
            return;
          }
          if (ch === "\u0003") process.exit(130);
          if (ch === "\u007f") typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      process.stdin.on("data", onData);
    });
  const first = await ask("Password: ");
  const again = await ask("Again: ");
  if (first !== again) fail("the two passwords differ", "run jfast-dashboard hash-password again");
  return first;
}

async function hashPasswordCommand() {
  const password = await readPassword();
  if (password.length < 12) fail(`the password has ${password.length} characters; use at least 12`, "a passphrase of four or more words is easy to type and hard to guess");
  process.stdout.write(`${await hashPassword(password)}\n`);
}

async function serve(flags) {
  let config;
  try {
    config = resolveConfig({ flags, env: process.env });
  } catch (error) {
    if (error instanceof DashboardConfigError) fail(error.message);
    throw error;
  }
  for (const notice of config.notices) process.stderr.write(`jfast-dashboard: ${notice}\n`);
  let dashboard;
  try {
    dashboard = await startDashboardServer({ config });
  } catch (error) {
    if (error instanceof MissingBuildError) fail(error.message);
    throw error;
  }
  const { host, port } = config.listen;
  const server = http.createServer(dashboard.handle);
  server.listen(port, host, () => {
    const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
    const who = config.users.map((u) => `${u.name} (${u.role})`).join(", ") || "nobody";
    process.stdout.write(
      `jfast-dashboard ${version} on http://${shown}:${port}${config.basePath}/ in ${Math.round(performance.now() - started)} ms: ${config.services.length} service${config.services.length === 1 ? "" : "s"} (${config.services.map((s) => s.name).join(", ")}), users: ${who}${config.proxyAuth ? ", single sign-on from a proxy" : ""}\n`,
    );
  });
  server.on("error", (error) => fail(`cannot listen on ${host}:${port}: ${error.message}`, "choose another --port (or PORT)"));
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

const { flags, rest } = parseFlags(process.argv.slice(2));
if (rest.includes("-h") || rest.includes("--help") || rest[0] === "help") process.stdout.write(HELP);
else if (rest.includes("-v") || rest.includes("--version")) process.stdout.write(`${version}\n`);
else if (rest[0] === "hash-password") await hashPasswordCommand();
else if (rest.length === 0 || rest[0] === "start") await serve(flags);
else fail(`unknown command or option "${rest[0]}"`, "jfast-dashboard --help");
