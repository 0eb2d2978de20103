import path from "node:path";
import { expect, type Locator, type Page } from "@playwright/test";
import pg from "pg";
import { PASSWORD, PG_URL, SCREENSHOTS, TOKENS, TRACE_URL, adminCall, eventually, queueStats, test, waitForHydration } from "./fixtures.js";
import { expectAccessible } from "./page-checks.js";

/**
 * The dashboard in a real browser (Debian's Chromium) against two real services: billing on PostgreSQL and
 * shipping on the memory backend, consuming a Kafka topic. The dashboard holds an operator token for billing and a viewer token for
 * shipping, so both roles are on screen at once. The tests run in order on the same services and session.
 */
const { billingOperator: BILLING_OPERATOR, billingViewer: BILLING_VIEWER, shippingViewer: SHIPPING_VIEWER } = TOKENS;

// Real processes on a busy machine: each test gets up to three minutes, as in brokers.spec.ts.
test.describe.configure({ mode: "serial", timeout: 180_000 });

test.describe("dashboard in a browser", () => {
  /** Waits for a value the page reaches after a fetch or a poll. */
  function poll<T>(fn: () => Promise<T> | T) {
    return expect.poll(fn, { timeout: 20_000, intervals: [200] });
  }

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: path.join(SCREENSHOTS, `dashboard-${name}.png`), fullPage: true });
  }

  /** axe finds no serious or critical violation, with the system set to light and then to dark. */

  function liveMode(page: Page) {
    return page.getByRole("status", { name: "Live updates" }).getAttribute("data-live-mode");
  }

  async function jobState(service: string, token: string, id: string): Promise<string | null> {
    const { body } = await adminCall(service, token, "jobs.get", { id });
    return body.result.data.job?.state ?? null;
  }

  test("refuses a wrong password and shows nothing without a session", async ({ browser, stack: { dashboard } }) => {
    const anonymous = waitForHydration(await browser.newContext({ baseURL: dashboard.url }));
    const page = await anonymous.newPage();
    try {
      await page.goto("/dead-letters");
      expect(new URL(page.url()).pathname).toBe("/login");
      await page.getByLabel("Password").fill("not the password");
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByText("Wrong name or password.").waitFor();
      expect(new URL(page.url()).pathname).toBe("/login");
      const api = await page.request.get("/api/admin/billing/overview.get");
      expect(api.status()).toBe(401);
      await expectAccessible(page);
      await shot(page, "login");
    } finally {
      await anonymous.close();
    }
  });

  test("logs in and shows both services with their depths", async ({ session: context, stack: { billing } }) => {
    // The worker's session may have been signed in by a spec that ran before this one: sign in from scratch.
    await context.clearCookies();
    const page = await context.newPage();
    await page.goto("/login");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const billingCard = page.getByRole("region", { name: "service billing" });
    const shippingCard = page.getByRole("region", { name: "service shipping" });
    await poll(() => billingCard.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("3");
    await poll(() => shippingCard.locator('[data-stat="Dead"] .stat-value').textContent()).toBe("2");
    expect(await billingCard.getByText("postgres").count()).toBeGreaterThan(0);
    expect(await shippingCard.getByText("memory").count()).toBeGreaterThan(0);
    expect(await billingCard.getByText("degraded").count()).toBeGreaterThan(0);
    // Live by server-sent events unless something blocks them.
    await poll(() => liveMode(page)).toBe("sse");
    // Throughput over the last hour: once the workers flushed their counts, the attempts that failed on the way
    // to the dead letters are on the sparkline, as the service reports them.
    const totals = await eventually("billing's throughput to count the failed attempts", async () => {
      const { body } = await adminCall(billing.url, BILLING_VIEWER, "overview.throughput", { minutes: 60 });
      const points = body.result.data.points as { processed: number; failed: number; dead: number }[];
      const sum = (key: "processed" | "failed" | "dead") => points.reduce((n, p) => n + p[key], 0);
      return sum("dead") === 3 && `${sum("processed")}/${sum("failed")}/${sum("dead")}`;
    });
    await page.reload();
    await poll(() => billingCard.locator("figure[data-throughput]").getAttribute("data-throughput")).toBe(totals);
    // The tokens stay on the dashboard's server.
    const html = await page.content();
    for (const token of [BILLING_OPERATOR, SHIPPING_VIEWER]) expect(html).not.toContain(token);
    await expectAccessible(page);
    await shot(page, "overview");
    await page.close();
  });

  test("shows a backlog past 50 000 as an estimate, and counts exactly again once it is gone", async ({ session: context, stack: { billing } }) => {
    // 60 000 jobs due tomorrow, written straight into billing's table (no worker takes them today): past the
    // 50 000 a state is counted exactly, so the Overview's Scheduled is estimated from a sample of the table.
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    const table = `"${billing.schema!}".jfast_jobs`;
    const page = await context.newPage();
    try {
      const { rows } = await client.query<{ queue: string }>(`SELECT queue FROM ${table} LIMIT 1`);
      await client.query(
        `INSERT INTO ${table} (id, queue, task, payload, state, max_attempts, available_at)
         SELECT 'backlog-' || g, $1, 'billing.ping', '{}', 'ready', 2, now() + interval '1 day' FROM generate_series(1, 60000) g`,
        [rows[0]!.queue],
      );
      await page.goto("/");
      const scheduled = page.getByRole("region", { name: "service billing" }).locator('[data-stat="Scheduled"] .stat-value');
      await poll(() => scheduled.locator("[data-estimated]").count()).toBe(1);
      const text = (await scheduled.textContent())!;
      expect(text).toMatch(/^≈ \d{2},\d{3} \(estimated\)$/);
      const shown = Number(text.replace(/[^\d]/g, ""));
      expect(shown).toBeGreaterThan(48_000);
      expect(shown).toBeLessThan(72_000);
      expect(await scheduled.locator("[data-estimated]").getAttribute("title")).toContain("estimated");
      await expectAccessible(page);
      // Gone again: an exact count, no mark.
      await client.query(`DELETE FROM ${table} WHERE id LIKE 'backlog-%'`);
      await poll(() => scheduled.locator("[data-estimated]").count()).toBe(0);
      expect(Number(await scheduled.textContent())).toBeLessThan(50_000);
    } finally {
      await client.query(`DELETE FROM ${table} WHERE id LIKE 'backlog-%'`).catch(() => undefined);
      await client.end();
      await page.close();
    }
  });

  test("switches to the dark theme, keeps it across a reload, and goes back to the system setting", async ({ session: context }) => {
    const page = await context.newPage();
    await page.goto("/");
    const theme = page.getByRole("group", { name: "Theme" });
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await theme.getByRole("button", { name: "Dark" }).click();
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    expect(await background()).not.toBe(light);
    await page.reload();
    // The server renders the chosen theme from the cookie, before any script runs.
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    expect(await theme.getByRole("button", { name: "Dark" }).getAttribute("aria-pressed")).toBe("true");
    await poll(() => page.getByRole("region", { name: "service billing" }).locator('[data-stat="Dead"] .stat-value').textContent()).toBe("3");
    await expectAccessible(page);
    await shot(page, "overview-dark");
    await theme.getByRole("button", { name: "System" }).click();
    expect(await page.locator("html").getAttribute("data-theme")).toBeNull();
    expect(await background()).toBe(light);
    await page.close();
  });

  test("lists dead letters of both services with their error, and the stack on demand", async ({ session: context }) => {
    const page = await context.newPage();
    await page.goto("/dead-letters");
    const table = page.getByRole("table", { name: "Dead letters" });
    await poll(() => table.locator("tbody tr").count()).toBe(5);
    expect(await table.locator(".error-text", { hasText: /^card declined for invoice inv-/ }).count()).toBe(5);
    expect(await table.getByText("CardDeclined", { exact: true }).count()).toBe(5);
    // The list carries no stacks (a page of them cost every open tab ~370 KB a refresh): Details reads them.
    expect(await table.locator("details").count()).toBe(0);
    await table.locator("tbody tr", { hasText: "CardDeclined" }).first().getByRole("button", { name: /^Details / }).click();
    const firstStack = page.getByRole("dialog").locator(".attempt details").first();
    await firstStack.locator("summary").click();
    expect(await firstStack.locator("pre").textContent()).toContain("CardDeclined: card declined");
    await page.keyboard.press("Escape");
    for (const token of [BILLING_OPERATOR, SHIPPING_VIEWER]) expect(await page.content()).not.toContain(token);
    await expectAccessible(page);
    await shot(page, "dead-letters");
    await page.close();
  });

  test("pages carry their data in their first HTML: with scripts off, dead letters, queues and schedules are on screen", async ({ browser, session: context, stack: { dashboard } }) => {
    const noScripts = await browser.newContext({ baseURL: dashboard.url, javaScriptEnabled: false, storageState: await context.storageState() });
    const page = await noScripts.newPage();
    try {
      await page.goto("/dead-letters");
      const deadLetters = page.getByRole("table", { name: "Dead letters" });
      expect(await deadLetters.locator("tbody tr").count()).toBe(5);
      expect(await deadLetters.locator(".error-text", { hasText: /^card declined for invoice inv-/ }).count()).toBe(5);
      await page.goto("/queues");
      expect(await page.getByRole("table", { name: "Queues of billing" }).locator("tbody tr").count()).toBeGreaterThan(0);
      await page.goto("/schedules");
      expect(await page.getByRole("table", { name: "Schedules of billing" }).locator('tr[data-row="nightly-ping"] [data-tick]').count()).toBe(3);
      expect(await page.getByText(/^Loading /).count()).toBe(0);
    } finally {
      await noScripts.close();
    }
  });

  test("a viewer token cannot retry: the button is disabled and the service refuses", async ({ session: context, stack: { shipping, dashboard } }) => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=shipping");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(2);
    await poll(() => rows.first().getByRole("button", { name: /^Retry / }).isDisabled()).toBe(true);
    expect(await rows.first().getByRole("button", { name: /^Discard / }).isDisabled()).toBe(true);
    const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
    const refused = await adminCall(shipping.url, SHIPPING_VIEWER, "deadLetters.retry", { ids: [id] }, true);
    expect(refused.status).toBe(403);
    expect(refused.body.error.data.code).toBe("FORBIDDEN");
    expect((await queueStats(shipping.url)).depths.dead).toBe(2);
    // The dashboard's server forwards the service's refusal unchanged.
    const proxied = await page.request.post("/api/admin/shipping/deadLetters.retry", { data: { ids: [id] }, headers: { origin: dashboard.url } });
    expect(proxied.status()).toBe(403);
    await page.close();
  });

  test("opens a dead letter's detail with its payload redacted and every attempt", async ({ session: context, stack: { billing } }) => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(3);
    await rows.first().getByRole("button", { name: /^Details / }).click();
    const drawer = page.getByRole("dialog");
    await drawer.getByText("Attempts (2 failed)").waitFor();
    expect(await drawer.getByLabel("payload", { exact: true }).textContent()).toContain('"card_number": "[redacted]"');
    expect(await drawer.locator(".attempt").count()).toBe(2);
    // The trace id, linked to the tracing UI named by JFAST_DASHBOARD_TRACE_URL.
    const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
    const { body } = await adminCall(billing.url, BILLING_VIEWER, "jobs.get", { id });
    const traceId: string = body.result.data.job.traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await drawer.locator(`a[data-trace-id="${traceId}"]`).getAttribute("href")).toBe(TRACE_URL.replace("{traceId}", traceId));
    await expectAccessible(page);
    await shot(page, "job-detail");
    await page.keyboard.press("Escape");
    await page.close();
  });

  test("shows a new dead letter without a reload, by server-sent events and by polling when they are blocked", async ({ session: context, stack: { shipping } }) => {
    test.setTimeout(90_000);
    const page = await context.newPage();
    await page.goto("/dead-letters?service=shipping");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(2);
    await poll(() => liveMode(page)).toBe("sse");
    const updates = async () => Number(await page.getByRole("status", { name: "Live updates" }).getAttribute("data-live-updates"));
    // The stream first sends both services' current state; let the refetches it causes settle.
    await poll(updates).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const pushes = await updates();
    const { ids } = (await (await fetch(`${shipping.url}/fail?count=1`, { method: "POST" })).json()) as { ids: string[] };
    // Nothing else refetches the table within the wait (no refetch on focus; the safety refetch is 30 s away):
    // the row comes because the stream said shipping changed.
    await poll(() => page.locator(`tr[data-row="shipping/${ids[0]}"]`).count()).toBe(1);
    expect(await rows.count()).toBe(3);
    await poll(updates).toBeGreaterThan(pushes);
    expect(await page.getByRole("status", { name: "Live updates" }).textContent()).toContain("live (SSE)");
    await page.close();

    // A proxy that blocks event streams: the page says it polls, and still shows the next dead letter.
    const blocked = await context.newPage();
    await blocked.route("**/api/stream", (route) => route.abort());
    await blocked.goto("/dead-letters?service=shipping");
    await poll(() => liveMode(blocked)).toBe("polling");
    expect(await blocked.getByRole("status", { name: "Live updates" }).textContent()).toContain("polling every 3 s");
    const blockedRows = blocked.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => blockedRows.count()).toBe(3);
    const next = (await (await fetch(`${shipping.url}/fail?count=1`, { method: "POST" })).json()) as { ids: string[] };
    await poll(() => blocked.locator(`tr[data-row="shipping/${next.ids[0]}"]`).count()).toBe(1);
    await blocked.close();
  });

  test("one click retries a dead letter: it leaves the table and runs", async ({ session: context, stack: { billing } }) => {
    await fetch(`${billing.url}/fix`, { method: "POST" });
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    const rows = page.getByRole("table", { name: "Dead letters" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(3);
    const id = (await rows.first().getAttribute("data-row"))!.split("/")[1]!;
    await rows.first().getByRole("button", { name: `Retry ${id}` }).click();
    await poll(() => page.locator(`tr[data-row="billing/${id}"]`).count()).toBe(0);
    await page.getByText(`Requeued ${id} on billing.`).waitFor();
    await eventually("billing's dead count to drop to 2", async () => (await queueStats(billing.url)).depths.dead === 2);
    // It ran: the job is completed (or already gone), not waiting and not dead.
    await eventually("the retried job to complete", async () => {
      const { body } = await adminCall(billing.url, BILLING_VIEWER, "jobs.get", { id });
      const job = body.result.data.job;
      return job === null || job.state === "completed";
    });
    await page.close();
  });

  test("groups dead letters by error and bulk-retries after showing the count", async ({ session: context, stack: { billing } }) => {
    const page = await context.newPage();
    await page.goto("/dead-letters?service=billing");
    await page.getByRole("button", { name: "Grouped by error" }).click();
    const groups = page.getByRole("table", { name: "Error groups" });
    // Two dead letters that differ only in their invoice number are one group.
    await poll(() => groups.locator("tbody tr").count()).toBe(1);
    const group = groups.locator("tbody tr");
    expect(await group.locator("td.num").textContent()).toBe("2");
    expect(await group.textContent()).toMatch(/CardDeclined\s*card declined for invoice inv-<\w+>-<n>/);
    await shot(page, "dead-letter-groups");
    // "Retry all matching…" previews the same two (closed without retrying) ...
    await page.getByRole("button", { name: "Table" }).click();
    await page.getByRole("button", { name: "Retry all matching…" }).click();
    const dialog = page.getByRole("dialog");
    await poll(() => dialog.locator('[data-preview="billing"]').textContent()).toBe("2 dead letters");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await poll(() => dialog.count()).toBe(0);
    // ... and "Retry group…" on the group's row replays exactly that group.
    await page.getByRole("button", { name: "Grouped by error" }).click();
    await groups.locator("tbody tr").getByRole("button", { name: "Retry group…" }).click();
    await poll(() => dialog.locator('[data-preview="billing"]').textContent()).toBe("2 dead letters");
    await dialog.getByLabel("Replay rate (jobs per second)").fill("5");
    await shot(page, "bulk-retry");
    await dialog.getByRole("button", { name: "Retry 2 dead letters" }).click();
    await page.getByText("Replay started: 2 dead letters at up to 5 per second.").waitFor();
    // The replay's progress, as the service reports it, until all of them are requeued.
    const replay = page.getByRole("region", { name: "replays" }).locator('[data-replay-total="2"]');
    await poll(() => replay.getAttribute("data-replay-done")).toBe("2");
    expect(await page.getByRole("region", { name: "replays" }).getByText("5/s").count()).toBe(1);
    await eventually("billing to have no dead letters", async () => (await queueStats(billing.url)).depths.dead === 0);
    await poll(() => page.getByText("No dead letters").count()).toBe(1);
    await expectAccessible(page);
    await shot(page, "replays");
    await page.close();
  });

  test("shows the audit trail of those actions", async ({ session: context }) => {
    const page = await context.newPage();
    await page.goto("/audit");
    const table = page.getByRole("table", { name: "Audit trail" });
    await poll(() => table.getByText("deadLetters.retryMatching").count()).toBe(1);
    // The replay is recorded when it starts (retryMatching) and when it ends (replay).
    await poll(() => table.getByText("deadLetters.replay", { exact: true }).count()).toBe(1);
    expect(await table.getByText("deadLetters.retry", { exact: true }).count()).toBe(1);
    // Each of those three by the person who did it (other specs sharing this stack audit actions of their own).
    expect(await table.getByRole("row").filter({ hasText: /deadLetters\.(retryMatching|replay|retry)/ }).filter({ hasText: "ops" }).count()).toBe(3);
    await expectAccessible(page);
    await shot(page, "audit");
    await page.close();
  });

  test("pauses a task on the queues page: its job waits while others run, and runs after resume", async ({ session: context, stack: { billing } }) => {
    test.setTimeout(90_000);
    const page = await context.newPage();
    await page.goto("/queues");
    const billingQueues = page.getByRole("table", { name: "Queues of billing" });
    const charge = billingQueues.locator('tr[data-row="billing.charge"]');
    await charge.waitFor();
    // The viewer token cannot pause shipping's tasks.
    await poll(() => page.getByRole("table", { name: "Queues of shipping" }).getByRole("button", { name: "Pause shipping.charge" }).isDisabled()).toBe(true);
    await charge.getByRole("button", { name: "Pause billing.charge" }).click();
    await page.getByText("Paused billing.charge on billing.").waitFor();
    await charge.getByText("paused", { exact: true }).waitFor();
    // Every process re-reads the paused tasks each second (docs/worker.md#pausing-a-task): let them, before enqueueing.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const held = ((await (await fetch(`${billing.url}/fail?count=1&task=billing.charge`, { method: "POST" })).json()) as { ids: string[] }).ids[0]!;
    const other = ((await (await fetch(`${billing.url}/fail?count=1&task=billing.ping`, { method: "POST" })).json()) as { ids: string[] }).ids[0]!;
    // The worker is running: the later job of another task completes, while the paused task's job waits.
    await eventually("billing.ping's job to complete", async () => [null, "completed"].includes(await jobState(billing.url, BILLING_VIEWER, other)));
    expect(await jobState(billing.url, BILLING_VIEWER, held)).toBe("ready");
    await poll(() => charge.locator("td.num").first().textContent()).toBe("1");
    await expectAccessible(page);
    await shot(page, "queues");
    await charge.getByRole("button", { name: "Resume billing.charge" }).click();
    await page.getByText("Resumed billing.charge on billing.").waitFor();
    await eventually("the held job to run after resume", async () => [null, "completed"].includes(await jobState(billing.url, BILLING_VIEWER, held)));
    await poll(() => charge.getByText("paused", { exact: true }).count()).toBe(0);
    await page.close();
  });

  test("finds a job by a payload field on the jobs page", async ({ session: context, stack: { shipping } }) => {
    const needle = `needle-${Date.now()}`;
    const { ids } = (await (await fetch(`${shipping.url}/fail?count=1&invoice=${needle}`, { method: "POST" })).json()) as { ids: string[] };
    await eventually("the needle job to die", async () => (await jobState(shipping.url, SHIPPING_VIEWER, ids[0]!)) === "dead");
    const page = await context.newPage();
    await page.goto("/jobs");
    const form = page.getByRole("search", { name: "Find jobs" });
    await form.getByLabel("Payload field").fill("invoice");
    await form.getByLabel("equals").fill(needle);
    await form.getByRole("button", { name: "Find" }).click();
    const found = page.getByRole("table", { name: "Jobs found on shipping" }).locator("tbody tr");
    await poll(() => found.count()).toBe(1);
    expect(await found.first().getAttribute("data-row")).toBe(ids[0]);
    expect(await found.first().getByText("dead", { exact: true }).count()).toBe(1);
    await page.getByRole("region", { name: "results of billing" }).getByText("No matching job").waitFor();
    expect(await page.locator('[data-scope="shipping"]').textContent()).toMatch(/^searched: .+/);
    await found.first().getByRole("button", { name: `Details of ${ids[0]}` }).click();
    expect(await page.getByRole("dialog").getByLabel("payload", { exact: true }).textContent()).toContain(needle);
    await page.keyboard.press("Escape");
    await expectAccessible(page);
    await shot(page, "jobs-search");
    await page.close();
  });

  test("draws each service's contracts in its own box, joined over Kafka, with violations in red", async ({ session: context }) => {
    test.setTimeout(120_000);
    const page = await context.newPage();
    await page.goto("/contracts");
    const graph = page.getByRole("group", { name: "Contracts graph" });
    await graph.waitFor();
    await poll(() => graph.locator("[data-service-group]").count()).toBe(2);
    // Edges are reachable by keyboard: focus one and press Enter (where edges cross, a click may land on another).
    const select = async (target: Locator) => {
      await target.focus();
      await page.keyboard.press("Enter");
    };
    await select(graph.getByRole("button", { name: "subscribes: billing/receipt.registered to billing/alert" }));
    await page.getByLabel("edge detail").getByText("seen in billing").waitFor();
    expect(await graph.getByRole("button", { name: /^publishes: billing\/billing to billing\/receipt.registered/ }).count()).toBe(1);
    // A node's detail lists every edge through it: billing's own event, published and subscribed in billing.
    await graph.getByRole("button", { name: "event receipt.registered in billing" }).click();
    const detail = page.getByLabel("node detail");
    await detail.getByText("Event receipt.registered (billing)").waitFor();
    expect(await detail.locator("li").count()).toBe(2);
    // A subscription to an event nobody publishes is a violation: red, and the checker's finding on click.
    await select(graph.getByRole("button", { name: "subscribes: billing/receipt.voided to billing/alert (violation)" }));
    await page.getByLabel("edge detail").getByText("orphan-subscription").waitFor();
    expect(await graph.locator('[data-node="module:billing/alert"] .graph-node-bad').count()).toBe(1);
    // Across services: billing publishes parcel.sent to "parcels", which shipping's Kafka handler takes.
    expect(await graph.getByRole("button", { name: "produces: billing/billing to parcels/parcel.sent" }).count()).toBe(1);
    await select(graph.getByRole("button", { name: "consumes: parcels/parcel.sent to shipping/shipping" }));
    await page.getByLabel("edge detail").getByText("seen in shipping").waitFor();
    // Shipping's handler also tells apart parcel.poison, which no service publishes: red, with the finding.
    await select(graph.getByRole("button", { name: "consumes: parcels/parcel.poison to shipping/shipping (violation)" }));
    await page.getByLabel("edge detail").getByText("orphan-kafka-event").waitFor();
    expect(await page.getByLabel("edge detail").textContent()).toContain(`shipping's shipping handles "parcel.poison" on the Kafka topic "parcels"`);
    await expectAccessible(page);
    await shot(page, "contracts");
    await page.close();
  });

  test("lists schedules with their next ticks in UTC and in the viewer's own zone", async ({ browser, session: context, stack: { dashboard } }) => {
    // A viewer in Tokyo: the same session, another time zone.
    const tokyo = waitForHydration(await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: dashboard.url, timezoneId: "Asia/Tokyo", locale: "en-GB", storageState: await context.storageState() }));
    const page = await tokyo.newPage();
    try {
      await page.goto("/schedules");
      const table = page.getByRole("table", { name: "Schedules of billing" });
      const row = table.locator('tr[data-row="nightly-ping"]');
      await row.waitFor();
      expect(await row.getByText("on time", { exact: true }).count()).toBe(1);
      // The page comes with its schedules from the server; the viewer's zone is the browser's, filled in there.
      await expect(table.locator("th", { hasText: "In your zone" })).toHaveText("In your zone (Asia/Tokyo)");
      const ticks = row.locator("[data-tick]");
      expect(await ticks.count()).toBe(3);
      // 03:30 in Mexico City (UTC-6 all year) is 09:30 UTC and 18:30 in Tokyo.
      const first = (await ticks.first().getAttribute("data-tick"))!;
      expect(first).toMatch(/T09:30:00(\.000)?Z$/);
      expect(await ticks.first().textContent()).toMatch(/T09:30:00Z$/);
      await expect(row.locator(`[data-local-tick="${first}"]`)).toContainText("18:30:00");
      await page.getByRole("region", { name: "schedules of shipping" }).getByText("No scheduler").waitFor();
      await expectAccessible(page);
      await shot(page, "schedules");
    } finally {
      await tokyo.close();
    }
  });

  test("marks a schedule's missed ticks: a tick of the last 24 hours nobody claimed", async ({ session: context, stack: { billing } }) => {
    // The nightly schedule's last claim was two days ago (the service was down since); it does not catch up, so
    // the tick of the last 24 hours was never claimed.
    await fetch(`${billing.url}/schedule-history?name=nightly-ping&days=2`, { method: "POST" });
    const page = await context.newPage();
    await page.goto("/schedules");
    const row = page.getByRole("table", { name: "Schedules of billing" }).locator('tr[data-row="nightly-ping"]');
    await poll(() => row.getByText("1 missed in 24 h", { exact: true }).count()).toBe(1);
    expect(await row.getByText("on time", { exact: true }).count()).toBe(0);
    await expectAccessible(page);
    await page.close();
  });

  test("shows a dead outbox row with its error, retries it and discards it, audited", async ({ session: context, stack: { billing } }) => {
    const { id } = (await (await fetch(`${billing.url}/outbox-orphan`, { method: "POST" })).json()) as { id: string };
    const page = await context.newPage();
    await page.goto("/outbox");
    await page.getByRole("heading", { name: "Outbox" }).waitFor();
    // Shipping has no outbox; billing's shows the row the relay could not deliver, with the reason.
    await page.getByRole("region", { name: "outbox of shipping" }).getByText("No outbox").waitFor();
    const rows = page.getByRole("table", { name: "Dead outbox rows of billing" }).locator("tbody tr");
    await poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-row")).toBe(id);
    expect(await rows.first().textContent()).toMatch(/OutboxUndeliverable: .*legacy\.jobs/);
    await expectAccessible(page);
    await shot(page, "outbox");
    // Sent back to the relay: it cannot deliver it here either, so it dies again, with a second attempt.
    await rows.first().getByRole("button", { name: `Retry outbox row ${id}` }).click();
    await page.getByText("Sent back to the relay: 1 row on billing.").waitFor();
    await eventually("the row to die again", async () => {
      const { body } = await adminCall(billing.url, TOKENS.billingViewer, "outbox.dead");
      return body.result?.data.rows[0]?.errors.length === 2;
    });
    await rows.first().getByRole("button", { name: `Discard outbox row ${id}` }).click();
    await page.getByText("No dead rows").waitFor();
    const { body } = await adminCall(billing.url, TOKENS.billingViewer, "audit.list");
    const actions = (body.result.data.entries as Array<{ action: string; ids: string[] }>).filter((e) => e.ids.includes(id)).map((e) => e.action);
    expect(actions).toEqual(["outbox.discard", "outbox.retry"]);
    await page.close();
  });

  test("renders jobs search and its empty state", async ({ session: context }) => {
    const page = await context.newPage();
    for (const [route, heading, text] of [
      ["/jobs", "Jobs", "Search jobs"],
    ] as const) {
      await page.goto(route);
      await page.getByRole("heading", { name: heading }).waitFor();
      await page.getByText(text).first().waitFor();
      await expectAccessible(page);
      await shot(page, route.slice(1));
    }
    await page.close();
  });

  test("shows Kafka lag per partition and the partition a failing message blocks", async ({ session: context, stack: { shipping } }) => {
    test.setTimeout(90_000);
    // A message its handler cannot take, then one behind it on the same key (so the same partition).
    await fetch(`${shipping.url}/publish?type=parcel.poison&key=parcel-7`, { method: "POST" });
    await fetch(`${shipping.url}/publish?type=parcel.sent&key=parcel-7`, { method: "POST" });
    const page = await context.newPage();
    await page.goto("/events");
    await page.getByRole("region", { name: "events of billing" }).getByText("Kafka events not enabled").waitFor();
    const partitions = page.getByRole("table", { name: "Kafka partitions of shipping" });
    const blocked = partitions.locator("tbody tr", { hasText: "cannot route parcel parcel-7" });
    await blocked.waitFor({ timeout: 30_000 });
    const { body } = await adminCall(shipping.url, SHIPPING_VIEWER, "events.status");
    const reported = (body.result.data.partitions as { topic: string; partition: number; lag: number; blocked: { offset: string } | null }[]).find((p) => p.blocked);
    expect(reported?.topic).toMatch(/parcels$/);
    expect(await blocked.getAttribute("data-row")).toBe(`${reported!.topic}/${reported!.partition}`);
    expect(await blocked.getByText(`offset ${reported!.blocked!.offset}`).count()).toBe(1);
    // Both messages wait: the failing one and the one behind it.
    await poll(async () => (await blocked.locator("td.num").nth(3).textContent()) === "2").toBe(true);
    await page.getByRole("region", { name: "events of shipping" }).getByText("1 blocked").waitFor();
    await expectAccessible(page);
    await shot(page, "events");
    await page.close();
  });

  test("shows a service that went down as down, without breaking the page", async ({ session: context, stack: { shipping } }) => {
    await shipping.halt();
    try {
      const page = await context.newPage();
      await page.goto("/");
      const shippingCard = page.getByRole("region", { name: "service shipping" });
      await shippingCard.getByText("down", { exact: true }).waitFor({ timeout: 20_000 });
      expect(await shippingCard.getByRole("alert").textContent()).toMatch(/shipping is unreachable|ECONNREFUSED|fetch failed/);
      await poll(() => page.getByRole("region", { name: "service billing" }).locator('[data-stat="Dead"] .stat-value').textContent()).toBe("0");
      await shot(page, "service-down");
      await page.close();
    } finally {
      // The suites after this one share the service.
      await shipping.restart();
    }
  });
});
