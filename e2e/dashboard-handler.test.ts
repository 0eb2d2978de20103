import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, start, type Running } from "./support/processes.js";

// @jfast/dashboard mounted in a Node server of a service's own (createDashboardHandler), as Express or Connect
// would call it: (req, res, next). The host keeps its own routes; the dashboard answers its paths only.

const DASHBOARD = path.join(REPO_ROOT, "apps", "dashboard");
const PASSWORD = "a long passphrase for the mounted dashboard";

const HOST = (port: number) => `
import http from "node:http";
import { createDashboardHandler } from "@jfast/dashboard";
import { hashPassword } from "${path.join(DASHBOARD, "lib", "passwords.mjs")}";

try {
  await createDashboardHandler({ basePath: "/ops", secret: "${"s".repeat(40)}" });
} catch (error) {
  console.log("refused basePath: " + error.message.split("\\n")[0]);
}
const dashboard = await createDashboardHandler({
  services: [{ name: "billing", url: "http://127.0.0.1:9", token: "t" }],
  users: [{ name: "olga", role: "operator", passwordHash: await hashPassword(${JSON.stringify(PASSWORD)}) }],
  secret: process.env.SECRET,
});
http
  .createServer((req, res) => {
    const next = () => {
      res.setHeader("content-type", "text/plain");
      res.end("the service's own route: " + req.url);
    };
    if (req.url.startsWith("/service/")) return next();
    dashboard(req, res, next);
  })
  .listen(${port}, "127.0.0.1", () => console.log("host listening"));
`;

describe("createDashboardHandler in a service's own server", () => {
  let host: Running;
  let base: string;
  beforeAll(async () => {
    if (!existsSync(path.join(DASHBOARD, "dist", "manifest.json"))) throw new Error("the dashboard is not built: npm run build -w @jfast/dashboard");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Run from the dashboard's folder so "@jfast/dashboard" resolves to the workspace package by its exports.
    host = start(process.execPath, ["--input-type=module", "-e", HOST(port)], { cwd: DASHBOARD, env: { NODE_ENV: "production", SECRET: randomBytes(32).toString("hex") } });
    await host.waitFor("host listening", 120_000);
  });
  afterAll(async () => {
    host?.child.kill("SIGTERM");
    await host?.exited;
  });

  it("refuses a base path, saying why and what works", () => {
    expect(host.output).toContain('refused basePath: the dashboard cannot be mounted under "/ops"');
  });

  it("serves its pages with the security headers and a nonce, and passes the host's paths on", async () => {
    const login = await fetch(`${base}/login`);
    expect(login.status).toBe(200);
    expect(login.headers.get("content-security-policy")).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
    expect(login.headers.get("x-frame-options")).toBe("DENY");
    const html = await login.text();
    const asset = /\/_next\/static\/[^"]+\.js/.exec(html)?.[0];
    expect((await fetch(`${base}${asset}`)).status).toBe(200);
    const own = await fetch(`${base}/service/invoices`);
    expect(await own.text()).toBe("the service's own route: /service/invoices");
    // A path that is neither the dashboard's nor the host's router's goes on too (the host answers it).
    expect(await (await fetch(`${base}/somewhere-else`)).text()).toBe("the service's own route: /somewhere-else");
  });

  it("signs a person in and shows the console behind the login", async () => {
    const signIn = await fetch(`${base}/api/login`, { method: "POST", body: new URLSearchParams({ name: "olga", password: PASSWORD }), redirect: "manual", headers: { origin: base } });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get("set-cookie")?.split(";")[0];
    expect(cookie).toMatch(/^jfast_session=/);
    const whoami = await fetch(`${base}/queues`, { headers: { cookie: cookie! }, redirect: "manual" });
    expect(whoami.status).toBe(200);
    expect(await whoami.text()).toContain(`data-person="olga"`);
  });
});
