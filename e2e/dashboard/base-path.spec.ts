import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, type Page } from "@playwright/test";
import { E2E_DIR, TOKENS, test, waitForHydration } from "./fixtures.js";

/**
 * The installed @jfast/dashboard mounted under /ops with createDashboardHandler({ basePath: "/ops" }) in Express
 * (`app.use("/ops", dashboard)`) and in Fastify (an onRequest hook), beside the host's own /login and /api/ping:
 * sign in, go through the pages by their links, read billing's dead letters through the admin proxy, live by
 * server-sent events, sign out, and never leave /ops.
 */
test.describe.configure({ mode: "serial", timeout: 180_000 });

const PASSWORD = "a long passphrase for the console under /ops";
let hosts: ChildProcess | undefined;
let ports: Record<string, number> = {};

test.beforeAll(async ({ stack }) => {
  const moduleDir = path.join(stack.installed.dir, "node_modules", "@jfast", "dashboard", "lib");
  const { hashPassword } = (await import(pathToFileURL(path.join(moduleDir, "passwords.mjs")).href)) as { hashPassword(p: string): Promise<string> };
  hosts = spawn(process.execPath, [path.join(E2E_DIR, "support", "dashboard-hosts.mjs")], {
    cwd: stack.installed.dir,
    env: {
      ...process.env,
      NODE_ENV: "production",
      FRAMEWORKS: "express,fastify",
      SECRET: randomBytes(32).toString("hex"),
      DASHBOARD_MODULE: path.join(moduleDir, "handler.mjs"),
      SERVICES: JSON.stringify([{ name: "billing", url: stack.billing.url, token: TOKENS.billingOperator }]),
      USERS: JSON.stringify([{ name: "olga", role: "operator", passwordHash: await hashPassword(PASSWORD) }]),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hosts did not start:\n${output}`)), 120_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const found = /hosts listening (\{.*\})/.exec(output);
      if (found) {
        clearTimeout(timer);
        ports = JSON.parse(found[1]!) as Record<string, number>;
        resolve();
      }
    };
    hosts!.stdout!.on("data", read);
    hosts!.stderr!.on("data", read);
    hosts!.on("exit", (code) => reject(new Error(`the hosts exited (${code}):\n${output}`)));
  });
});

test.afterAll(async () => {
  hosts?.kill("SIGTERM");
});

for (const framework of ["express", "fastify"]) {
  test(`${framework}: the console under /ops, signed in, every link and call below the path`, async ({ browser }) => {
    const base = `http://127.0.0.1:${ports[framework]}`;
    const context = waitForHydration(await browser.newContext({ viewport: { width: 1280, height: 860 } }));
    const outside: string[] = [];
    context.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === base && url.pathname !== "/ops" && !url.pathname.startsWith("/ops/")) outside.push(url.pathname);
    });
    const page: Page = await context.newPage();
    try {
      await page.goto(`${base}/ops/dead-letters`);
      expect(new URL(page.url()).pathname).toBe("/ops/login");
      await page.getByLabel("Name").fill("olga");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/ops");
      // Live by server-sent events from /ops/api/stream.
      await expect.poll(() => page.getByRole("status", { name: "Live updates" }).getAttribute("data-live-mode")).toBe("sse");
      // Billing's dead letters, read through the admin proxy under the path, reached by the page's own link.
      await page.getByRole("navigation").getByRole("link", { name: "Dead letters" }).click();
      await page.getByRole("heading", { name: "Dead letters" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/ops/dead-letters");
      await expect(page.getByRole("table", { name: "Dead letters" }).locator("tbody tr")).toHaveCount(3);
      await page.getByRole("navigation").getByRole("link", { name: "Queues" }).click();
      await page.getByRole("heading", { name: "Queues" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/ops/queues");
      // The theme cookie and the session cookie stay below the path.
      await page.getByRole("group", { name: "Theme" }).getByRole("button", { name: "Dark" }).click();
      for (const cookie of await context.cookies(base)) expect(cookie.path, cookie.name).toBe("/ops");
      // The host's own pages are untouched.
      const host = await context.request.get(`${base}/login`);
      expect(await host.json()).toMatchObject({ host: framework, path: "/login" });
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("button", { name: "Log in" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/ops/login");
      expect(outside).toEqual([]);
    } finally {
      await context.close();
    }
  });
}
