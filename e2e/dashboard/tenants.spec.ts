import { expect, type Browser, type Locator } from "@playwright/test";
import { adminCall, eventually, hashPassword, startDashboard, startService, test as base, type Running, waitForHydration } from "./fixtures.js";
import { expectAccessible } from "./page-checks.js";

/**
 * Flow control per key on the dashboard (docs/flow-control.md), in a real browser: `accounts` on PostgreSQL and
 * `tallies` on Redis, each with a task run in order per account (`orderedBy`, a dead job blocks its account) and a
 * task shared fairly across tenants (`fairness: "tenant"`, one running job per tenant). The Queues page's By tenant
 * table counts what was enqueued; the Dead letters page lists the blocked keys of both; an operator skips one and
 * its next job starts; a viewer, and a service the dashboard holds with a read-only token, cannot skip.
 */
const STAMP = Date.now();
const TOKENS = { accounts: `operator-${STAMP}-accounts`, tallies: `operator-${STAMP}-tallies`, talliesViewer: `viewer-${STAMP}-tallies` };
const PASSWORDS = { vic: "viewer vic's long passphrase", olga: "operator olga's long passphrase" };

/**
 * The two tasks each service adds to its module: entries applied in order per account (one attempt: an entry with
 * `fail` dies at once and blocks its account; `napMs` keeps one running), and rows imported in turn per tenant, one
 * running per tenant, each running until the service stops.
 */
const flowTasks = (service: string) => `
export const applyEntry = task("${service}.apply_entry", { orderedBy: (p) => p.account, maxAttempts: 1 }, async (p) => {
  if (p.fail) throw new Error(\`entry \${p.entry} refused\`);
  if (p.napMs) await new Promise((resolve) => setTimeout(resolve, p.napMs));
});

export const importRow = task("${service}.import_row", { fairness: "tenant", concurrency: { key: (_p, job) => job.tenantId ?? "none", limit: 1 } }, async () => {
  await new Promise((resolve) => setTimeout(resolve, 600_000));
});
`;

/** What each service is given: tenant → [due jobs, jobs due in an hour] of import_row. */
const IMPORTS: Record<string, [number, number]> = { acme: [5, 2], globex: [3, 0], initech: [1, 0] };
/** The ledger's tenant: account acct-7's entries (the first dies, the second naps, the third is quick) and acct-8's one. */
const LEDGER_TENANT = "umbrella";

async function signIn(browser: Browser, url: string, name: keyof typeof PASSWORDS) {
  const context = waitForHydration(await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 860 } }));
  const page = await context.newPage();
  await page.goto("/login");
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Password").fill(PASSWORDS[name]);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  return { context, page };
}

async function create(service: Running, token: string, input: { task: string; payload: unknown; tenant: string; delayMs?: number }): Promise<string> {
  const { status, body } = await adminCall(service.url, token, "jobs.create", input, true);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.result.data.id as string;
}

async function jobState(service: Running, token: string, id: string): Promise<string> {
  return (await adminCall(service.url, token, "jobs.get", { id })).body.result.data.job.state as string;
}

interface Blocked {
  task: string;
  key: string;
  jobId: string;
  waiting: number;
}

async function blockedKeys(service: Running, token: string): Promise<Blocked[]> {
  return (await adminCall(service.url, token, "keys.blocked")).body.result.data.keys as Blocked[];
}

/** The cells of the row of `tenant` in a By tenant table: ready, scheduled, running. */
async function counts(table: Locator, tenant: string): Promise<string[]> {
  const row = table.locator("tbody tr", { has: table.page().locator("code", { hasText: new RegExp(`^${tenant}$`) }) });
  if ((await row.count()) === 0) return [];
  return (await row.locator("td").allTextContents()).slice(1, 4);
}

/** Per service: account acct-7's three entries (the dead one first) and acct-8's entry. */
type Ledger = Record<"accounts" | "tallies", { dead: string; next: string; last: string; other: string }>;

interface Flow {
  accounts: Running;
  tallies: Running;
  console: Running;
  ledger: Ledger;
}

/**
 * The two services and a dashboard in front of them (the operator token for accounts, the read-only one for
 * tallies) with named people, started once per worker from the suite's installed packages, with the jobs enqueued
 * and acct-7 blocked on both; stopped, their schema and keys dropped, whatever the tests did.
 */
const test = base.extend<{}, { flow: Flow }>({
  flow: [
    async ({ stack: { installed } }, use) => {
      const started: Running[] = [];
      try {
        const [accounts, tallies] = await Promise.all([
          startService({ installed, name: "accounts", backend: "postgres", tokens: `ops:operator:${TOKENS.accounts}`, schedules: flowTasks("accounts") }).then((r) => (started.push(r), r)),
          startService({
            installed,
            name: "tallies",
            backend: "redis",
            tokens: `ops:operator:${TOKENS.tallies},dashboard:viewer:${TOKENS.talliesViewer}`,
            schedules: flowTasks("tallies"),
          }).then((r) => (started.push(r), r)),
        ]);
        const console_ = await startDashboard(installed, {
          services: [
            { name: "accounts", url: accounts.url, token: TOKENS.accounts },
            { name: "tallies", url: tallies.url, token: TOKENS.talliesViewer },
          ],
          users: [
            { name: "vic", role: "viewer", passwordHash: await hashPassword(installed, PASSWORDS.vic) },
            { name: "olga", role: "operator", passwordHash: await hashPassword(installed, PASSWORDS.olga) },
          ],
        });
        started.push(console_);
        const services = { accounts, tallies };
        const ledger = {} as Ledger;
        for (const [name, service] of Object.entries(services) as ["accounts" | "tallies", Running][]) {
          const token = TOKENS[name];
          const entry = (payload: Record<string, unknown>) => create(service, token, { task: `${name}.apply_entry`, payload, tenant: LEDGER_TENANT });
          const dead = await entry({ account: "acct-7", entry: 1, fail: true });
          const next = await entry({ account: "acct-7", entry: 2, napMs: 600_000 });
          const last = await entry({ account: "acct-7", entry: 3 });
          const other = await entry({ account: "acct-8", entry: 1 });
          ledger[name] = { dead, next, last, other };
          for (const [tenant, [due, later]] of Object.entries(IMPORTS)) {
            for (let i = 0; i < due; i++) await create(service, token, { task: `${name}.import_row`, payload: { row: i }, tenant });
            for (let i = 0; i < later; i++) await create(service, token, { task: `${name}.import_row`, payload: { row: due + i }, tenant, delayMs: 3_600_000 });
          }
        }
        for (const [name, service] of Object.entries(services) as ["accounts" | "tallies", Running][]) {
          await eventually(`${name}: account acct-7 blocked by its dead entry`, async () => (await blockedKeys(service, TOKENS[name])).some((k) => k.key === "acct-7"));
          // Another account is not held by it.
          await eventually(`${name}: account acct-8's entry completed`, async () => (await jobState(service, TOKENS[name], ledger[name].other)) === "completed");
        }
        await use({ accounts, tallies, console: console_, ledger });
      } finally {
        await Promise.all(started.map((r) => r.stop()));
      }
    },
    { scope: "worker", timeout: 420_000 },
  ],
});

test.describe.configure({ mode: "serial", timeout: 300_000 });

test.describe("flow control per key in a browser", () => {
  test("the Queues page counts each tenant's ready, scheduled and running jobs", async ({ browser, flow }) => {
    const { context, page } = await signIn(browser, flow.console.url, "olga");
    try {
      await page.goto("/queues");
      await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
      // One running job per tenant (its key's limit), the rest ready; acme's two delayed rows scheduled. The
      // blocked account's two entries wait behind its dead one; acct-8's entry is done. The same on both backends:
      // Redis lists the jobs waiting on their keys' own lists as ready (docs/redis.md#listing-jobs).
      for (const service of ["accounts", "tallies"]) {
        const table = page.getByRole("table", { name: `Depths by tenant of ${service}`, exact: true });
        await expect.poll(() => counts(table, "acme")).toEqual(["4", "2", "1"]);
        await expect.poll(() => counts(table, "globex")).toEqual(["2", "0", "1"]);
        await expect.poll(() => counts(table, "initech")).toEqual(["0", "0", "1"]);
        await expect.poll(() => counts(table, LEDGER_TENANT)).toEqual(["2", "0", "0"]);
        await expect(table.locator("tbody tr")).toHaveCount(4);
      }
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  test("an operator skips a blocked key on the Dead letters page, and the key's next job starts", async ({ browser, flow: { accounts, tallies, console: console_, ledger } }) => {
    const { context, page } = await signIn(browser, console_.url, "olga");
    try {
      await page.goto("/dead-letters");
      const section = page.getByRole("region", { name: "Blocked keys" });
      const table = section.getByRole("table", { name: "Blocked keys" });
      const row = (service: string) => table.locator("tbody tr", { hasText: `${service}.apply_entry` });
      for (const name of ["accounts", "tallies"]) {
        await expect(row(name)).toHaveCount(1);
        await expect(row(name)).toContainText("acct-7");
        await expect(row(name)).toContainText(ledger[name as keyof typeof ledger].dead);
        // The entries behind the dead one.
        await expect(row(name).locator("td").nth(5)).toHaveText("2");
      }
      // The dashboard's token for tallies is read-only: its key cannot be skipped from here.
      const talliesSkip = row("tallies").getByRole("button", { name: "Skip key acct-7 of tallies.apply_entry" });
      await expect(talliesSkip).toBeDisabled();
      await expect(talliesSkip).toHaveAttribute("title", /read-only/);

      await row("accounts").getByRole("button", { name: "Skip key acct-7 of accounts.apply_entry" }).click();
      await expect(section.getByRole("status")).toHaveText("Skipped key acct-7 of accounts.apply_entry on accounts: its next job starts.");
      await expect(row("accounts")).toHaveCount(0);
      await expect(row("tallies")).toHaveCount(1);

      // The next entry runs; the one after it still waits its turn; the dead one stays a dead letter.
      await eventually("accounts: entry 2 of acct-7 running", async () => (await jobState(accounts, TOKENS.accounts, ledger.accounts.next)) === "running");
      expect(await jobState(accounts, TOKENS.accounts, ledger.accounts.last)).toBe("ready");
      expect(await jobState(accounts, TOKENS.accounts, ledger.accounts.dead)).toBe("dead");
      expect((await blockedKeys(accounts, TOKENS.accounts)).map((k) => k.key)).toEqual([]);
      expect((await blockedKeys(tallies, TOKENS.tallies)).map((k) => k.key)).toEqual(["acct-7"]);
      await expectAccessible(page);

      // The Queues page follows: the tenant's entry running, one ready.
      await page.goto("/queues");
      const depths = page.getByRole("table", { name: "Depths by tenant of accounts", exact: true });
      await expect.poll(() => counts(depths, LEDGER_TENANT)).toEqual(["1", "0", "1"]);
    } finally {
      await context.close();
    }
  });

  test("a viewer sees the blocked keys without a Skip button, and the server refuses a forged skip", async ({ browser, flow: { tallies, console: console_ } }) => {
    const { context, page } = await signIn(browser, console_.url, "vic");
    try {
      await page.goto("/dead-letters");
      const table = page.getByRole("region", { name: "Blocked keys" }).getByRole("table", { name: "Blocked keys" });
      await expect(table.locator("tbody tr", { hasText: "tallies.apply_entry" })).toContainText("acct-7");
      await expect(page.getByRole("button", { name: /^Skip key / })).toHaveCount(0);
      await expectAccessible(page);
      const forged = await page.request.post("/api/admin/tallies/keys.skip", { data: { task: "tallies.apply_entry", key: "acct-7" }, headers: { origin: console_.url } });
      expect(forged.status()).toBe(403);
      expect((await forged.json()).error.message).toContain("viewers cannot change anything");
      expect((await blockedKeys(tallies, TOKENS.tallies)).map((k) => k.key)).toEqual(["acct-7"]);
    } finally {
      await context.close();
    }
  });
});
