import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, type Browser, type Page } from "@playwright/test";
import { TOKENS, adminCall, eventually, hashPassword, queueStats, startDashboard, test, type Installed, type Running, waitForHydration } from "./fixtures.js";

/**
 * The installed @jfast/dashboard (packed, installed in a temporary folder, run as its `jfast-dashboard` binary)
 * with named people: a viewer, an operator and an admin signed in with scrypt-hashed passwords, one person
 * named by a single sign-on proxy, and billing holding a dashboard's token so its audit trail names the person.
 */
test.describe.configure({ mode: "serial", timeout: 180_000 });

const PASSWORDS = { vic: "viewer vic's long passphrase", olga: "operator olga's long passphrase", ada: "admin ada's long passphrase" };
const PROXY_SECRET: string = randomBytes(24).toString("hex");
const PAGES = [
  { path: "/", heading: "Overview" },
  { path: "/queues", heading: "Queues" },
  { path: "/dead-letters", heading: "Dead letters" },
  { path: "/jobs", heading: "Jobs" },
  { path: "/schedules", heading: "Schedules" },
  { path: "/outbox", heading: "Outbox" },
  { path: "/events", heading: "Events (Kafka)" },
  { path: "/contracts", heading: "Contracts" },
  { path: "/audit", heading: "Audit trail" },
];

function runBin(installed: Installed, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(installed.bin, args, { cwd: installed.dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function expectAccessible(page: Page) {
  for (const colorScheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page }).analyze();
    const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious.map((v) => `${colorScheme}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
  }
}

/**
 * A context signed in as `name`. Its pages wait for hydration after each `goto` (so clicks land), unless
 * `hydration` is false: then a `goto` returns as soon as the page is there, for timing what a reader sees.
 */
async function signIn(browser: Browser, url: string, name: keyof typeof PASSWORDS, { hydration = true } = {}) {
  const opened = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 860 } });
  const context = hydration ? waitForHydration(opened) : opened;
  const page = await context.newPage();
  await page.goto("/login");
  await page.locator("html[data-hydrated]").waitFor({ state: "attached" });
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Password").fill(PASSWORDS[name]);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  return { context, page };
}

/** Makes `count` dead letters in billing (its handler broken again for them) and answers their ids. */
async function deadLetters(billing: Running, count: number): Promise<string[]> {
  const before = (await queueStats(billing.url)).depths.dead;
  await fetch(`${billing.url}/break`, { method: "POST" });
  const { ids } = (await (await fetch(`${billing.url}/fail?count=${count}`, { method: "POST" })).json()) as { ids: string[] };
  await eventually(`${count} more dead letters in billing`, async () => (await queueStats(billing.url)).depths.dead === before + count);
  return ids;
}

let console_: Running & { startMs: number };

test.describe("the installed dashboard, signed in per person", () => {
  test.beforeAll(async ({ stack: { installed, billing } }) => {
    test.setTimeout(240_000);
    const users = [
      { name: "vic", role: "viewer" as const, passwordHash: await hashPassword(installed, PASSWORDS.vic) },
      { name: "olga", role: "operator" as const, passwordHash: await hashPassword(installed, PASSWORDS.olga) },
      { name: "ada", role: "admin" as const, passwordHash: await hashPassword(installed, PASSWORDS.ada) },
    ];
    expect(users[0]!.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    console_ = await startDashboard(installed, {
      services: [{ name: "billing", url: billing.url, token: TOKENS.billingDashboard }],
      users,
      proxyAuth: { secretHeader: "x-proxy-secret", secret: PROXY_SECRET, roles: { "sam@example.com": "operator" } },
    });
  });

  test.afterAll(async () => {
    await console_?.stop();
  });

  test("the binary: --help names the docs, no secret refuses to start, the production build starts", async ({ stack: { installed } }) => {
    const help = await runBin(installed, ["--help"], process.env);
    expect(help.code).toBe(0);
    expect(help.output).toContain("dashboard.md");
    expect(help.output).toContain("hash-password");
    const { JFAST_DASHBOARD_SECRET: _, ...env } = process.env;
    const refused = await runBin(installed, ["--port", "0"], { ...env, NODE_ENV: "production", JFAST_DASHBOARD_SERVICES: "[]" });
    expect(refused.code).toBe(2);
    expect(refused.output).toContain("JFAST_DASHBOARD_SECRET");
    expect(refused.output).toContain("openssl rand -hex 32");
    const startedIn = Number(/ in (\d+) ms/.exec(console_.output())?.[1]);
    expect(startedIn).toBeGreaterThan(0);
    console.log(`jfast-dashboard started in ${startedIn} ms (its own count, process start to listening; ${console_.startMs} ms until /login answered); installed package ${(installed.dashboardBytes / 1e6).toFixed(1)} MB`);
  });

  test("every answer carries the security headers", async ({ request }) => {
    const page = await request.get(`${console_.url}/login`);
    const html = await page.text();
    const asset = /\/_next\/static\/[^"]+\.js/.exec(html)?.[0];
    expect(asset).toBeTruthy();
    const answers = [
      page,
      await request.get(`${console_.url}${asset}`),
      await request.get(`${console_.url}/api/admin/billing/overview.get`),
      // Signed out, every path but the login is sent there (docs/security.md); the redirect carries the headers too.
      await request.get(`${console_.url}/no-such-page`, { maxRedirects: 0 }),
      await request.post(`${console_.url}/api/login`, { form: { name: "nobody", password: "x" }, maxRedirects: 0 }),
    ];
    expect(answers.map((a) => a.status())).toEqual([200, 200, 401, 307, 303]);
    for (const answer of answers) {
      const headers = answer.headers();
      const scriptSrc = /script-src ([^;]*)/.exec(headers["content-security-policy"] ?? "")?.[1] ?? "";
      expect(scriptSrc).toContain("'self'");
      expect(scriptSrc).not.toContain("unsafe-inline");
      expect(scriptSrc).not.toContain("unsafe-eval");
      expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(headers["content-security-policy"]).toContain("default-src 'self'");
      expect(headers["x-content-type-options"]).toBe("nosniff");
      expect(headers["referrer-policy"]).toBe("no-referrer");
      expect(headers["x-frame-options"]).toBe("DENY");
    }
    // A page's inline scripts run by its nonce, a fresh one per page; nothing else carries one.
    const nonceOf = (csp: string | undefined) => /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp ?? "")?.[1];
    const nonce = nonceOf(page.headers()["content-security-policy"]);
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((m) => m[1]!);
    expect(inline.length).toBeGreaterThan(0);
    for (const attributes of inline) expect(attributes).toContain(`nonce="${nonce}"`);
    const again = await request.get(`${console_.url}/login`);
    expect(nonceOf(again.headers()["content-security-policy"])).not.toBe(nonce);
    expect(nonceOf(answers[1]!.headers()["content-security-policy"])).toBeUndefined();
  });

  test("under that policy the pages hydrate: no script is refused, and buttons work", async ({ browser }) => {
    const { context, page } = await signIn(browser, console_.url, "vic");
    const refused: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    try {
      await page.goto("/dead-letters");
      const grouped = page.getByRole("button", { name: "Grouped by error" });
      await grouped.click();
      await expect(grouped).toHaveAttribute("aria-pressed", "true");
      await page.goto("/contracts");
      await page.locator(".react-flow__node").first().waitFor();
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test("a viewer sees no mutation button, and the server refuses a forged mutation", async ({ browser, stack: { billing } }) => {
    const id = (await deadLetters(billing, 1))[0]!;
    const { context, page } = await signIn(browser, console_.url, "vic");
    try {
      expect(await page.locator(".signed-in").textContent()).toBe("vic (viewer)");
      await page.goto("/dead-letters");
      const row = page.locator(`tr[data-row="billing/${id}"]`);
      await row.getByRole("button", { name: `Details of ${id}` }).waitFor();
      expect(await page.getByRole("button", { name: /^(Retry|Discard)/ }).count()).toBe(0);
      await page.goto("/queues");
      await page.getByRole("table").first().waitFor();
      expect(await page.getByRole("button", { name: /^(Pause|Resume)/ }).count()).toBe(0);
      // A forged call from the viewer's own session: refused by the dashboard, the dead letter stays.
      const forged = await page.request.post("/api/admin/billing/deadLetters.retry", { data: { ids: [id] }, headers: { origin: console_.url } });
      expect(forged.status()).toBe(403);
      expect((await forged.json()).error.message).toContain("viewers cannot change anything");
      expect((await adminCall(billing.url, TOKENS.billingViewer, "jobs.get", { id })).body.result.data.job.state).toBe("dead");
      expect(console_.output()).toContain('"msg":"dashboard refused a mutation","user":"vic"');
    } finally {
      await context.close();
    }
  });

  test("every page as a viewer: accessible in both themes, and its warm load time", async ({ browser }) => {
    test.setTimeout(600_000);
    const { context, page } = await signIn(browser, console_.url, "vic", { hydration: false });
    try {
      const timings: string[] = [];
      for (const { path: where, heading } of PAGES) {
        await page.goto(where);
        await page.getByRole("heading", { name: heading, exact: true }).waitFor();
        await expect(page.getByText(/^Loading /)).toHaveCount(0);
        await expectAccessible(page);
        // Warm: the page loaded again, as an operator moving around the dashboard sees it.
        const began = Date.now();
        await page.goto(where);
        await page.getByRole("heading", { name: heading, exact: true }).waitFor();
        await expect(page.getByText(/^Loading /)).toHaveCount(0);
        timings.push(`${where} ${Date.now() - began} ms`);
      }
      console.log(`warm page loads (navigation until the data is on screen): ${timings.join(", ")}`);
    } finally {
      await context.close();
    }
  });

  test("an operator retries a dead letter and billing's audit trail names her, her role and the dashboard", async ({ browser, stack: { billing } }) => {
    const id = (await deadLetters(billing, 1))[0]!;
    const { context, page } = await signIn(browser, console_.url, "olga");
    try {
      await page.goto("/dead-letters");
      const row = page.locator(`tr[data-row="billing/${id}"]`);
      // Bulk actions are the admin's: an operator acts on rows.
      await row.getByRole("button", { name: `Retry ${id}` }).waitFor();
      expect(await page.getByRole("button", { name: "Retry all matching…" }).count()).toBe(0);
      const bulk = await page.request.post("/api/admin/billing/deadLetters.retryMatching", { data: {}, headers: { origin: console_.url } });
      expect(bulk.status()).toBe(403);
      await row.getByRole("button", { name: `Retry ${id}` }).click();
      await expect(row).toHaveCount(0);
      const entry = await eventually("the retry in billing's audit trail", async () => {
        const { body } = await adminCall(billing.url, TOKENS.billingViewer, "audit.list");
        return (body.result.data.entries as Array<{ action: string; ids: string[]; actor: string; role: string; via: string | null }>).find((e) => e.action === "deadLetters.retry" && e.ids.includes(id));
      });
      expect(entry).toMatchObject({ actor: "olga", role: "operator", via: "console" });
      // Billing's handler is still broken: the job fails its two attempts again and is back among the dead letters.
      // Its drawer marks the retry between the first two failures and the last two, naming her.
      await eventually("the retried job dead again", async () => {
        const { body } = await adminCall(billing.url, TOKENS.billingViewer, "jobs.get", { id });
        return body.result.data.job?.state === "dead" && body.result.data.job.errors.length === 4;
      });
      await page.reload();
      await row.getByRole("button", { name: `Details of ${id}` }).click();
      const drawer = page.getByRole("dialog");
      const mark = drawer.locator('[data-retry-mark="olga"]');
      await expect(mark).toContainText("Retried by olga");
      await expect(mark).toContainText("attempts reset");
      // Newest first: two failures after the mark, two before it.
      const history = await drawer.locator(".attempt, .retry-mark").evaluateAll((nodes) => nodes.map((n) => (n.classList.contains("retry-mark") ? "retry" : "failure")));
      expect(history).toEqual(["failure", "failure", "retry", "failure", "failure"]);
      await expectAccessible(page);
      await page.keyboard.press("Escape");
      // The task filter suggests billing's own tasks, one of them as the example.
      const task = page.getByRole("form", { name: "Filters" }).getByLabel("Task");
      await expect(task).toHaveAttribute("placeholder", /^e\.g\. billing\./);
      const suggested = await page.locator(`datalist#${await task.getAttribute("list")} option`).evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
      expect(suggested).toEqual(expect.arrayContaining(["billing.charge", "billing.ping"]));
      // The dashboard's audit page shows the person too.
      await page.goto("/audit");
      await page.getByRole("table", { name: "Audit trail" }).getByText("olga").first().waitFor();
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  test("an admin may retry all matching", async ({ browser }) => {
    const { context, page } = await signIn(browser, console_.url, "ada");
    try {
      await page.goto("/dead-letters");
      await page.getByRole("button", { name: "Retry all matching…" }).waitFor();
      expect(await page.locator(".signed-in").textContent()).toBe("ada (admin)");
    } finally {
      await context.close();
    }
  });

  test("logging out ends the session on the server: the old cookie opens nothing", async ({ browser }) => {
    const { context, page } = await signIn(browser, console_.url, "olga");
    try {
      const cookie = (await context.cookies()).find((c) => c.name === "jfast_session");
      expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
      expect((await page.request.get("/api/admin/billing/overview.whoami")).status()).toBe(200);
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("button", { name: "Log in" }).waitFor();
      // Someone who kept the cookie (a copy taken before the logout) gets nothing with it.
      const kept = waitForHydration(await browser.newContext({ baseURL: console_.url }));
      try {
        await kept.addCookies([{ ...cookie!, expires: Date.now() / 1000 + 3600 }]);
        expect((await kept.request.get("/api/admin/billing/overview.whoami")).status()).toBe(401);
        const stale = await kept.newPage();
        await stale.goto("/dead-letters");
        expect(new URL(stale.url()).pathname).toBe("/login");
      } finally {
        await kept.close();
      }
    } finally {
      await context.close();
    }
  });

  test("single sign-on: a proxy with the shared secret names the person; without it the header is ignored", async ({ browser }) => {
    const proxied = waitForHydration(await browser.newContext({ baseURL: console_.url, extraHTTPHeaders: { "x-forwarded-email": "sam@example.com", "x-forwarded-user": "sam", "x-proxy-secret": PROXY_SECRET } }));
    try {
      const page = await proxied.newPage();
      await page.goto("/");
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      expect(await page.locator(".signed-in").textContent()).toBe("sam@example.com (operator)");
      const who = await page.request.get("/api/admin/billing/overview.whoami");
      expect((await who.json()).result.data).toMatchObject({ name: "sam@example.com", role: "operator", via: "console" });
    } finally {
      await proxied.close();
    }
    const forged = waitForHydration(await browser.newContext({ baseURL: console_.url, extraHTTPHeaders: { "x-forwarded-email": "sam@example.com", "x-proxy-secret": "not the secret" } }));
    try {
      const page = await forged.newPage();
      await page.goto("/");
      expect(new URL(page.url()).pathname).toBe("/login");
    } finally {
      await forged.close();
    }
  });

  // Last: it locks this test's address (127.0.0.1) out of the dashboard for a while.
  test("wrong passwords are logged, and from the fifth the address is locked out with a growing delay", async ({ request }) => {
    const login = (password: string) => request.post(`${console_.url}/api/login`, { form: { name: "olga", password }, maxRedirects: 0 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await login(`wrong ${i}`)).status());
    expect(statuses).toEqual([303, 303, 303, 303, 429]);
    // Locked: even the right password is refused, unchecked, and told how long to wait.
    const refused = await login(PASSWORDS.olga);
    expect(refused.status()).toBe(429);
    expect(Number(refused.headers()["retry-after"])).toBeGreaterThan(0);
    const failures = console_.output().split("\n").filter((l) => l.includes('"msg":"dashboard sign-in failed"') && l.includes('"user":"olga"'));
    expect(failures).toHaveLength(5);
    expect(failures[4]).toContain('"failures":5');
    expect(failures[4]).toContain('"locked_for_s":2');
    expect(console_.output()).toContain('"msg":"dashboard sign-in refused: address locked out"');
    // Once the lockout ran out the right password works (and clears the count).
    await new Promise((r) => setTimeout(r, 2100));
    const ok = await login(PASSWORDS.olga);
    expect(ok.status()).toBe(303);
    expect(ok.headers()["location"]).toBe("/");
  });
});
