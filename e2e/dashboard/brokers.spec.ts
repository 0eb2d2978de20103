import { randomBytes } from "node:crypto";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type BrowserContext, type Page } from "@playwright/test";
import pg from "pg";
import { PASSWORD, PG_URL, SCREENSHOTS, adminCall, eventually, installPackages, queueStats, startDashboard, startService, type Running, waitForHydration } from "./fixtures.js";

/**
 * The dashboard watching services whose queues live in Redis and in RabbitMQ, in a real browser against the real
 * brokers: `ledger` on Redis (its scheduler claims ticks in Redis too) and `mailer` on RabbitMQ with a database
 * (its scheduler claims ticks in PostgreSQL, one schedule every 5 seconds). Dead letters are made for real, read,
 * retried and audited through the pages; the page says what RabbitMQ cannot count; and a schedule whose ticks
 * cannot be claimed shows as late, then as missed once it runs again.
 */
const STAMP = Date.now();
const TOKENS = { ledger: `operator-${STAMP}-ledger`, mailer: `operator-${STAMP}-mailer` };
/** Unique per run: a schedule's claims are serialised by an advisory lock keyed by its name, database-wide. */
const HEARTBEAT = `heartbeat-${randomBytes(4).toString("hex")}`;

interface Brokers {
  ledger: Running;
  mailer: Running;
  dashboard: Running;
}

const test = base.extend<{}, { brokers: Brokers; session: BrowserContext }>({
  brokers: [
    async ({}, use) => {
      const started: Running[] = [];
      // The packed and installed packages, as in the other suites (fixtures.ts).
      const installed = await installPackages();
      try {
        const [ledger, mailer] = await Promise.all([
          startService({ installed, name: "ledger", backend: "redis", scheduler: true, tokens: `ops:operator:${TOKENS.ledger}` }).then((r) => (started.push(r), r)),
          startService({
            installed,
            name: "mailer",
            backend: "rabbitmq",
            database: true,
            scheduler: true,
            tokens: `ops:operator:${TOKENS.mailer}`,
            schedules: `\nexport const heartbeat = schedule("mailer.ping", { every: { seconds: 5 }, name: "${HEARTBEAT}" });\n`,
          }).then((r) => (started.push(r), r)),
        ]);
        const dashboard = await startDashboard(installed, {
          password: PASSWORD,
          services: [
            { name: "ledger", url: ledger.url, token: TOKENS.ledger },
            { name: "mailer", url: mailer.url, token: TOKENS.mailer },
          ],
        });
        started.push(dashboard);
        await fetch(`${ledger.url}/fail?count=2`, { method: "POST" });
        await fetch(`${mailer.url}/fail?count=2`, { method: "POST" });
        await eventually("2 dead letters in ledger (Redis)", async () => (await queueStats(ledger.url)).depths.dead === 2);
        await eventually("2 dead letters in mailer (RabbitMQ)", async () => (await queueStats(mailer.url)).depths.dead === 2);
        await use({ ledger, mailer, dashboard });
      } finally {
        await Promise.all(started.map((r) => r.stop()));
        await installed.cleanup();
      }
    },
    { scope: "worker", timeout: 420_000 },
  ],
  session: [
    async ({ browser, brokers }, use) => {
      const context = waitForHydration(await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: brokers.dashboard.url }));
      const page = await context.newPage();
      await page.goto("/login");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.close();
      await use(context);
      await context.close();
    },
    { scope: "worker" },
  ],
});

test.describe.configure({ mode: "serial", timeout: 180_000 });

function poll<T>(fn: () => Promise<T> | T, timeout = 20_000) {
  return expect.poll(fn, { timeout, intervals: [250] });
}

async function expectAccessible(page: Page) {
  for (const colorScheme of ["dark", "light"] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page }).analyze();
    const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious.map((v) => `${colorScheme}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
  }
}

test.describe("dashboard over Redis and RabbitMQ", () => {
  test("the overview shows both services with their backend and dead letters", async ({ session }) => {
    const page = await session.newPage();
    await page.goto("/");
    const ledger = page.getByRole("region", { name: "service ledger" });
    const mailer = page.getByRole("region", { name: "service mailer" });
    await poll(() => ledger.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("2");
    await poll(() => mailer.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("2");
    expect(await ledger.getByText("redis").count()).toBeGreaterThan(0);
    expect(await mailer.getByText("rabbitmq").count()).toBeGreaterThan(0);
    await expectAccessible(page);
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-brokers-overview.png"), fullPage: true });
    await page.close();
  });

  test("reads each broker's dead letters with every attempt", async ({ session }) => {
    const page = await session.newPage();
    for (const service of ["ledger", "mailer"]) {
      await page.goto(`/dead-letters?service=${service}`);
      const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
      await poll(() => rows.count()).toBe(2);
      expect(await rows.locator(".error-text", { hasText: /^card declined for invoice inv-/ }).count()).toBe(2);
      await rows.first().getByRole("button", { name: /^Details / }).click();
      const drawer = page.getByRole("dialog");
      await drawer.getByText("Attempts (2 failed)").waitFor();
      expect(await drawer.locator(".attempt").count()).toBe(2);
      expect(await drawer.getByLabel("payload", { exact: true }).textContent()).toContain('"card_number": "[redacted]"');
      await expectAccessible(page);
      await page.keyboard.press("Escape");
    }
    await page.close();
  });

  test("retries a dead letter on each broker: it runs, and the service audits it", async ({ session, brokers }) => {
    const page = await session.newPage();
    for (const [service, running] of [["ledger", brokers.ledger], ["mailer", brokers.mailer]] as const) {
      await fetch(`${running.url}/fix`, { method: "POST" });
      await page.goto(`/dead-letters?service=${service}`);
      const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
      await poll(() => rows.count()).toBe(2);
      const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
      await rows.first().getByRole("button", { name: `Retry ${id}` }).click();
      await page.getByText(`Requeued ${id} on ${service}.`).waitFor();
      await poll(() => page.locator(`tr[data-row="${service}/${id}"]`).count()).toBe(0);
      const token = TOKENS[service];
      await eventually(`${service}'s retried job to run`, async () => {
        const { depths } = await queueStats(running.url);
        return depths.dead === 1 && depths.ready === 0 && depths.running === 0 && depths.scheduled === 0;
      });
      // Redis keeps the completed job; RabbitMQ does not keep what it delivered, and says so.
      const { body } = await adminCall(running.url, token, "jobs.get", { id });
      if (service === "ledger") expect(body.result.data.job.state).toBe("completed");
      else expect(body.result.data.job).toBeNull();
      const audit = await adminCall(running.url, token, "audit.list", { limit: 20 });
      const entries = JSON.stringify(audit.body.result.data);
      expect(entries).toContain(id);
      expect(entries).toContain("deadLetters.retry");
    }
    await page.close();
  });

  test("the queues page counts per task on Redis and says why RabbitMQ cannot", async ({ session }) => {
    const page = await session.newPage();
    await page.goto("/queues");
    const ledger = page.getByRole("region", { name: "queues of ledger" });
    const mailer = page.getByRole("region", { name: "queues of mailer" });
    const charge = ledger.getByRole("table", { name: "Queues of ledger" }).locator("tr", { hasText: "ledger.charge" });
    await poll(() => charge.locator("td").nth(5).textContent()).toBe("1");
    await poll(() => mailer.getByRole("status").filter({ hasText: "No counts per task" }).count()).toBe(1);
    expect(await mailer.getByRole("status").filter({ hasText: "No counts per task" }).textContent()).toMatch(/RabbitMQ/);
    // Pausing works where the backend can hold a task back: on Redis, then resumed.
    await ledger.getByRole("button", { name: "Pause ledger.ping" }).click();
    await page.getByText("Paused ledger.ping on ledger.").waitFor();
    await ledger.getByRole("button", { name: "Resume ledger.ping" }).click();
    await page.getByText("Resumed ledger.ping on ledger.").waitFor();
    await expectAccessible(page);
    await page.close();
  });

  test("jobs by state: Redis lists its states, RabbitMQ says why it cannot list waiting jobs instead of an empty table", async ({ session }) => {
    test.setTimeout(180_000);
    const page = await session.newPage();
    await page.goto("/jobs/states?service=mailer&state=ready");
    await page.getByText("This queue cannot list ready jobs.").waitFor();
    await page.getByText(/a waiting message cannot be read without taking it out of its queue/).waitFor();
    await expect(page.getByRole("table", { name: "ready jobs" })).toHaveCount(0);
    await page.getByRole("group", { name: "State" }).getByRole("button", { name: /^Dead/ }).click();
    await expect(page.getByRole("table", { name: "dead jobs" }).or(page.getByText("No dead jobs on this page"))).toBeVisible();
    await expectAccessible(page);
    await page.goto("/jobs/states?service=ledger&state=dead");
    await expect(page.getByRole("table", { name: "dead jobs" }).or(page.getByText("No dead jobs on this page"))).toBeVisible();
    await page.getByRole("group", { name: "State" }).getByRole("button", { name: /^Cancelled/ }).click();
    await page.getByText("This queue cannot list cancelled jobs.").waitFor();
    await page.close();
  });

  test("a schedule that cannot claim its ticks shows late, then missed once it runs again", async ({ session }) => {
    test.setTimeout(240_000);
    const page = await session.newPage();
    await page.goto("/schedules");
    const ledgerRow = page.getByRole("region", { name: "schedules of ledger" }).locator("tr", { hasText: "nightly-ping" });
    await poll(() => ledgerRow.count()).toBe(1);
    const row = page.locator("tr", { hasText: HEARTBEAT });
    await poll(() => row.getByText("on time", { exact: true }).count()).toBe(1);
    // A replica stuck inside its claim holds the schedule's lock: no other replica can claim a tick meanwhile.
    const stuck = new pg.Client({ connectionString: PG_URL });
    await stuck.connect();
    try {
      await stuck.query("SELECT pg_advisory_lock(hashtextextended('jfast.schedule:' || $1::text, 0))", [HEARTBEAT]);
      // A tick more than a minute overdue is late.
      await poll(() => row.getByText("late", { exact: true }).count(), 120_000).toBe(1);
      await expectAccessible(page);
      await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-schedule-late.png"), fullPage: true });
    } finally {
      await stuck.end();
    }
    // Released: the scheduler claims the latest tick (catch-up) and the ones it skipped count as missed.
    await poll(() => row.getByText("late", { exact: true }).count(), 30_000).toBe(0);
    await poll(() => row.getByText(/^\d+ missed in 24 h$/).count(), 30_000).toBe(1);
    await page.close();
  });
});
