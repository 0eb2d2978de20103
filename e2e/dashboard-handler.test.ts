import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, start, type Running } from "./support/processes.js";

// @jfast/dashboard mounted under /ops in a service's own server (createDashboardHandler({ basePath: "/ops" })), the
// documented way for node:http, Express, Fastify, Koa, Hono and Nest (e2e/support/dashboard-hosts.mjs): sign-in,
// pages, assets, the admin proxy and the live stream answer under the path; the host's own paths stay its own.

const DASHBOARD = path.join(REPO_ROOT, "apps", "dashboard");
const PASSWORD = "a long passphrase for the mounted dashboard";
const FRAMEWORKS = ["http", "express", "fastify", "koa", "hono", "nest"] as const;

describe("createDashboardHandler under a base path, in every Node web framework", () => {
  let hosts: Running;
  let service: Running;
  let ports: Record<string, number>;
  beforeAll(async () => {
    if (!existsSync(path.join(DASHBOARD, "dist", "manifest.json"))) throw new Error("the dashboard is not built: npm run build -w @jfast/dashboard");
    const { hashPassword } = (await import(path.join(DASHBOARD, "lib", "passwords.mjs"))) as { hashPassword(p: string): Promise<string> };
    // A stand-in for a service's admin API: the proxy forwards the token and the procedure to it.
    const servicePort = await freePort();
    service = start(process.execPath, ["--input-type=module", "-e", `
      import http from "node:http";
      http.createServer((req, res) => {
        res.setHeader("content-type", "application/json");
        // The pages' own calls get an error (they show it); the test's call with ?echo gets what the service saw.
        if (!req.url.includes("echo")) {
          res.statusCode = 503;
          return res.end(JSON.stringify({ error: { message: "a stand-in service", code: -32603, data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 503 } } }));
        }
        res.end(JSON.stringify({ result: { data: { seen: req.url, token: req.headers.authorization } } }));
      }).listen(${servicePort}, "127.0.0.1", () => console.log("service listening"));
    `]);
    await service.waitFor("service listening", 30_000);
    hosts = start(process.execPath, [path.join(REPO_ROOT, "e2e", "support", "dashboard-hosts.mjs")], {
      cwd: DASHBOARD,
      env: {
        NODE_ENV: "production",
        SECRET: randomBytes(32).toString("hex"),
        DASHBOARD_MODULE: path.join(DASHBOARD, "lib", "handler.mjs"),
        SERVICES: JSON.stringify([{ name: "billing", url: `http://127.0.0.1:${servicePort}`, token: "billing-token" }]),
        USERS: JSON.stringify([{ name: "olga", role: "operator", passwordHash: await hashPassword(PASSWORD) }]),
      },
    });
    await hosts.waitFor("hosts listening", 120_000);
    ports = JSON.parse(/hosts listening (\{.*\})/.exec(hosts.output)![1]!) as Record<string, number>;
  });
  afterAll(async () => {
    for (const running of [hosts, service]) {
      running?.child.kill("SIGTERM");
      await running?.exited;
    }
  });

  for (const framework of FRAMEWORKS) {
    it(`${framework}: the dashboard answers under /ops only, signed in, with its assets, proxy and live stream`, async () => {
      const base = `http://127.0.0.1:${ports[framework]}`;
      // Signed out: a page sends the browser to the sign-in page under the path.
      const signedOut = await fetch(`${base}/ops/queues`, { redirect: "manual" });
      expect(signedOut.status).toBe(307);
      expect(new URL(signedOut.headers.get("location")!, base).pathname).toBe("/ops/login");
      // The Overview is the base path itself, without a slash after it.
      const overviewSignedOut = await fetch(`${base}/ops`, { redirect: "manual" });
      expect(overviewSignedOut.status).toBe(307);
      expect(new URL(overviewSignedOut.headers.get("location")!, base).pathname).toBe("/ops/login");
      const login = await fetch(`${base}/ops/login`);
      expect(login.status).toBe(200);
      expect(login.headers.get("content-security-policy")).toMatch(/script-src 'self' 'nonce-/);
      const html = await login.text();
      expect(html).toContain('action="/ops/api/login"');
      expect(html).not.toMatch(/jfastbasepathplaceholder/);
      const asset = /\/ops\/_next\/static\/[^"]+\.js/.exec(html)?.[0];
      expect(asset).toBeDefined();
      expect((await fetch(`${base}${asset}`)).status).toBe(200);
      // The host's own paths, even those the dashboard has below /ops, are the host's.
      for (const own of ["/login", "/api/ping"]) {
        const answer = await fetch(`${base}${own}`);
        expect(await answer.json()).toMatchObject({ host: framework, path: own });
      }
      const rootAsset = await fetch(`${base}/_next/static/${asset!.split("/_next/static/")[1]}`);
      expect(rootAsset.headers.get("content-type")).not.toContain("javascript");
      // Sign-in: back to the console under the path, with a cookie sent only below it.
      const signIn = await fetch(`${base}/ops/api/login`, { method: "POST", body: new URLSearchParams({ name: "olga", password: PASSWORD }), redirect: "manual", headers: { origin: base } });
      expect(signIn.status).toBe(303);
      expect(signIn.headers.get("location")).toBe("/ops");
      const setCookie = signIn.headers.get("set-cookie")!;
      expect(setCookie).toMatch(/; Path=\/ops;/);
      const cookie = setCookie.split(";")[0]!;
      const queues = await fetch(`${base}/ops/queues`, { headers: { cookie }, redirect: "manual" });
      expect(queues.status).toBe(200);
      const queuesHtml = await queues.text();
      expect(queuesHtml).toContain(`data-person="olga"`);
      expect(queuesHtml).not.toMatch(/jfastbasepathplaceholder/);
      expect(queuesHtml).toContain('href="/ops/dead-letters"');
      const overview = await fetch(`${base}/ops`, { headers: { cookie }, redirect: "manual" });
      expect(overview.status, hosts.output.slice(-3000)).toBe(200);
      expect(overview.headers.get("content-security-policy")).toMatch(/script-src 'self' 'nonce-/);
      // The admin proxy: the service gets its token and the procedure.
      const proxied = await fetch(`${base}/ops/api/admin/billing/health.get?echo`, { headers: { cookie } });
      expect(proxied.status).toBe(200);
      expect(await proxied.json()).toMatchObject({ result: { data: { seen: expect.stringContaining("/jfast/admin/health.get"), token: "Bearer billing-token" } } });
      // The live stream opens under the path.
      const controller = new AbortController();
      const stream = await fetch(`${base}/ops/api/stream`, { headers: { cookie, accept: "text/event-stream" }, signal: controller.signal });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      controller.abort();
    });
  }

  it("refuses a mount path that is not its base path, naming the fix", async () => {
    const port = await freePort();
    const other = start(process.execPath, ["--input-type=module", "-e", `
      import express from "express";
      import { createDashboardHandler } from "@jfast/dashboard";
      const app = express();
      app.use("/admin", await createDashboardHandler({ basePath: "/ops", secret: "${"s".repeat(40)}" }));
      app.use((error, req, res, next) => res.status(500).send(error.message));
      app.listen(${port}, "127.0.0.1", () => console.log("listening"));
    `], { cwd: DASHBOARD, env: { NODE_ENV: "production" } });
    try {
      await other.waitFor("listening", 120_000);
      const answer = await fetch(`http://127.0.0.1:${port}/admin/login`);
      expect(answer.status).toBe(500);
      expect(await answer.text()).toContain('mounted under "/admin" but its basePath is "/ops"');
    } finally {
      other.child.kill("SIGTERM");
      await other.exited;
    }
  });
});
