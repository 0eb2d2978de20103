// The dashboard's configuration, resolved once from (highest first) command-line flags, environment variables
// and a JSON config file. Used by the jfast-dashboard binary before it starts the server (so a bad
// configuration stops it with a message naming the fix) and by the server itself (`next dev`). docs/dashboard.md
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { normaliseBasePath } from "./base-path.mjs";
import { isPasswordHash } from "./passwords.mjs";

export const ROLES = /** @type {const} */ (["viewer", "operator", "admin"]);
const DOCS = "jfast docs dashboard";
const MIN_SECRET = 32;

export class DashboardConfigError extends Error {
  /** @param {string} message @param {string} hint */
  constructor(message, hint) {
    super(`${message}\n  fix: ${hint}`);
    this.name = "DashboardConfigError";
    this.code = "CONFIG_INVALID";
    this.hint = hint;
  }
}

/**
 * @param {{ flags?: Record<string, string | undefined>, env?: NodeJS.ProcessEnv, file?: Record<string, any> }} [params]
 * @returns {import("./config.d.mts").ResolvedDashboardConfig}
 */
export function resolveConfig(params = {}) {
  const env = params.env ?? process.env;
  const flags = params.flags ?? {};
  const development = env.NODE_ENV === "development";
  const notices = [];
  const path = params.file ? null : (flags.config ?? env.JFAST_DASHBOARD_CONFIG);
  /** @type {Record<string, any>} */
  let file = params.file ?? {};
  if (params.file !== undefined && (!params.file || typeof params.file !== "object" || Array.isArray(params.file))) {
    throw new DashboardConfigError("the dashboard's options are not an object", `createDashboardHandler({ services, users, secret }); ${DOCS}#mounting-in-a-node-server`);
  }
  if (path) {
    try {
      file = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new DashboardConfigError(`the config file ${path} is not a readable JSON file: ${error.message}`, `point --config (or JFAST_DASHBOARD_CONFIG) at a JSON file; ${DOCS}#configuration`);
    }
    if (!file || typeof file !== "object" || Array.isArray(file)) throw new DashboardConfigError(`the config file ${path} is not a JSON object`, `${DOCS}#configuration`);
  }
  const services = validateServices(jsonVar(env, "JFAST_DASHBOARD_SERVICES", '[{"name":"billing","url":"http://127.0.0.1:8000","token":"..."}]') ?? file.services ?? []);
  let users = validateUsers(jsonVar(env, "JFAST_DASHBOARD_USERS", '[{"name":"ann","role":"operator","passwordHash":"scrypt$..."}]') ?? file.users ?? []);
  const password = env.JFAST_DASHBOARD_PASSWORD || (typeof file.password === "string" ? file.password : null);
  let sharedPassword = false;
  if (password) {
    if (users.some((u) => u.name === "admin")) throw new DashboardConfigError(`a shared password and a user named "admin" are both configured`, `drop JFAST_DASHBOARD_PASSWORD (or "password") and sign in as the users you listed; ${DOCS}#users`);
    // The single shared password of earlier versions: one user named "admin", with every role's rights.
    users = [...users, { name: "admin", role: "admin", passwordHash: null, password }];
    sharedPassword = true;
    notices.push(`the shared password (JFAST_DASHBOARD_PASSWORD) signs in one user named "admin" with the admin role; name each person in "users" with a role and a hash from \`jfast-dashboard hash-password\` instead (${DOCS}#users)`);
  }
  const proxyAuth = validateProxyAuth(file.proxyAuth ?? jsonVar(env, "JFAST_DASHBOARD_PROXY_AUTH", '{"trustedProxies":["127.0.0.1"]}') ?? null);
  if (users.length === 0 && !proxyAuth) {
    notices.push(`no users are configured: nobody can sign in. Add "users" to the config file (or JFAST_DASHBOARD_USERS), ${DOCS}#users`);
  }
  let secret = env.JFAST_DASHBOARD_SECRET || (typeof file.secret === "string" ? file.secret : "");
  let secretGenerated = false;
  if (!secret) {
    if (!development) {
      throw new DashboardConfigError(
        "the dashboard has no session secret: it signs session cookies with one, and refuses to start without it outside development",
        `set JFAST_DASHBOARD_SECRET to a random value, e.g. JFAST_DASHBOARD_SECRET=$(openssl rand -hex 32), or "secret" in the config file; ${DOCS}#sessions`,
      );
    }
    secret = randomBytes(32).toString("hex");
    secretGenerated = true;
    notices.push(`no JFAST_DASHBOARD_SECRET: a random one was made for this development process (sessions end when it stops)`);
  }
  if (secret.length < MIN_SECRET) {
    throw new DashboardConfigError(`the session secret has ${secret.length} characters; it needs at least ${MIN_SECRET}`, `make one with openssl rand -hex 32 (64 characters); ${DOCS}#sessions`);
  }
  const port = flags.port ?? env.PORT ?? file.listen?.port ?? 3000;
  if (!/^\d{1,5}$/.test(String(port)) || Number(port) > 65535) throw new DashboardConfigError(`the port "${port}" is not a TCP port`, `--port 3000, PORT=3000 or "listen": { "port": 3000 }; ${DOCS}#configuration`);
  const host = flags.host ?? env.HOST ?? file.listen?.host ?? "0.0.0.0";
  const sessionHours = Number(env.JFAST_DASHBOARD_SESSION_HOURS ?? file.sessionHours ?? 12);
  if (!(sessionHours > 0 && sessionHours <= 24 * 30)) throw new DashboardConfigError(`sessionHours must be between 0 and 720`, `${DOCS}#sessions`);
  const rawBasePath = flags.basePath ?? env.JFAST_DASHBOARD_BASE_PATH ?? file.basePath;
  const basePath = normaliseBasePath(rawBasePath);
  if (basePath === null) throw new DashboardConfigError(`the base path ${JSON.stringify(rawBasePath)} is not a path the dashboard can be served under`, `a path of one or more segments of letters, digits, "-", "_" or "~", such as "/ops" or "/admin/jobs" (or "/" for the root); ${DOCS}#under-a-path`);
  return {
    basePath,
    services,
    users,
    sharedPassword,
    proxyAuth,
    secret,
    secretGenerated,
    listen: { host: String(host), port: Number(port) },
    sessionHours,
    traceUrl: validateTraceUrl(env.JFAST_DASHBOARD_TRACE_URL ?? file.traceUrl),
    notices,
  };
}

function jsonVar(env, name, example) {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new DashboardConfigError(`${name} is not JSON: ${error.message}`, `expected e.g. ${name}='${example}'; ${DOCS}#configuration`);
  }
}

function validateTraceUrl(value) {
  if (!value) return null;
  if (typeof value !== "string" || !/^https?:\/\//.test(value) || !value.includes("{traceId}")) {
    throw new DashboardConfigError("the trace URL (JFAST_DASHBOARD_TRACE_URL) must be an http(s) URL with {traceId} where the id goes", `e.g. http://127.0.0.1:16686/trace/{traceId}; ${DOCS}#configuration`);
  }
  return value;
}

function validateServices(value) {
  if (!Array.isArray(value)) throw new DashboardConfigError("the dashboard's services must be a JSON array of { name, url, token }", `${DOCS}#configuration`);
  const seen = new Set();
  return value.map((entry, index) => {
    const { name, url, token } = entry ?? {};
    if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/i.test(name)) throw new DashboardConfigError(`service #${index + 1}: "name" must be a short identifier such as "billing"`, `${DOCS}#configuration`);
    if (seen.has(name)) throw new DashboardConfigError(`service "${name}" is listed twice`, `${DOCS}#configuration`);
    seen.add(name);
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new DashboardConfigError(`service "${name}": "url" must be the service's base URL, e.g. http://127.0.0.1:8000`, `${DOCS}#configuration`);
    if (typeof token !== "string" || token.length === 0) throw new DashboardConfigError(`service "${name}": "token" is its admin bearer token`, `give the dashboard a token configured as "<name>:dashboard:<token>" on the service; ${DOCS}#identity-on-the-services`);
    return { name, url: url.replace(/\/+$/, ""), token };
  });
}

function validateUsers(value) {
  if (!Array.isArray(value)) throw new DashboardConfigError("the dashboard's users must be a JSON array of { name, role, passwordHash }", `${DOCS}#users`);
  const seen = new Set();
  return value.map((entry, index) => {
    const { name, role, passwordHash } = entry ?? {};
    if (typeof name !== "string" || !/^[^\s:,]{1,100}$/.test(name)) throw new DashboardConfigError(`user #${index + 1}: "name" must be 1 to 100 characters without spaces, ":" or ","`, `${DOCS}#users`);
    if (seen.has(name)) throw new DashboardConfigError(`user "${name}" is listed twice`, `${DOCS}#users`);
    seen.add(name);
    if (!ROLES.includes(role)) throw new DashboardConfigError(`user "${name}": "role" must be viewer, operator or admin`, `${DOCS}#users`);
    if (passwordHash !== undefined && passwordHash !== null && !isPasswordHash(passwordHash)) {
      throw new DashboardConfigError(`user "${name}": "passwordHash" is not a hash made by jfast-dashboard hash-password`, `run \`jfast-dashboard hash-password\` and paste its output; never the password itself; ${DOCS}#users`);
    }
    return { name, role, passwordHash: passwordHash ?? null, password: null };
  });
}

function validateProxyAuth(value) {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) throw new DashboardConfigError(`"proxyAuth" must be an object`, `${DOCS}#single-sign-on-through-a-proxy`);
  const trustedProxies = value.trustedProxies ?? [];
  const secret = value.secret ?? null;
  if (!Array.isArray(trustedProxies) || trustedProxies.some((a) => typeof a !== "string")) throw new DashboardConfigError(`"proxyAuth.trustedProxies" must be a list of addresses`, `${DOCS}#single-sign-on-through-a-proxy`);
  if (trustedProxies.length === 0 && !secret) {
    throw new DashboardConfigError(`"proxyAuth" trusts nobody: without "trustedProxies" or a shared "secret" anyone could send the user header`, `list the proxy's addresses in "trustedProxies" and/or set "secretHeader" and "secret"; ${DOCS}#single-sign-on-through-a-proxy`);
  }
  if (secret !== null && (typeof secret !== "string" || secret.length < MIN_SECRET)) throw new DashboardConfigError(`"proxyAuth.secret" needs at least ${MIN_SECRET} characters`, `${DOCS}#single-sign-on-through-a-proxy`);
  const listed = value.roles ?? {};
  if (typeof listed !== "object" || Array.isArray(listed)) throw new DashboardConfigError(`"proxyAuth.roles" must be an object of name: role`, `${DOCS}#single-sign-on-through-a-proxy`);
  // A Map, so that a header naming "toString" or "__proto__" finds no role a plain object would inherit.
  const roles = new Map();
  for (const [who, role] of Object.entries(listed)) {
    if (!ROLES.includes(role)) throw new DashboardConfigError(`"proxyAuth.roles.${who}" must be viewer, operator or admin`, `${DOCS}#single-sign-on-through-a-proxy`);
    roles.set(who, role);
  }
  const defaultRole = value.defaultRole ?? null;
  if (defaultRole !== null && !ROLES.includes(defaultRole)) throw new DashboardConfigError(`"proxyAuth.defaultRole" must be viewer, operator or admin (or absent: only people named in "roles" or "users" get in)`, `${DOCS}#single-sign-on-through-a-proxy`);
  return {
    userHeader: String(value.userHeader ?? "x-forwarded-user").toLowerCase(),
    emailHeader: String(value.emailHeader ?? "x-forwarded-email").toLowerCase(),
    trustedProxies: trustedProxies.map((a) => normaliseAddress(a)),
    secretHeader: secret ? String(value.secretHeader ?? "x-jfast-proxy-secret").toLowerCase() : null,
    secret,
    roles,
    defaultRole,
  };
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one address. */
export function normaliseAddress(address) {
  return String(address).replace(/^::ffff:/, "");
}
