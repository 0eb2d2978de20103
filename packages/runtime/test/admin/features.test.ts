import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { BackendError } from "../../src/errors/jfast-error.js";
import { OPERATOR, VIEWER, call } from "./admin-harness.js";

/** The views that read other features: the running scheduler, and the contracts checker on a service root. */
describe("admin router: schedules and contracts", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(params: { toml: string; files?: Record<string, string>; tasks?: ReturnType<typeof defineTask>[] }): Promise<Jfast> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-features-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), params.toml);
    for (const [file, text] of Object.entries(params.files ?? {})) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), text);
    }
    const jfast = await createJfast({
      root,
      tasks: params.tasks ?? [],
      env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER}` },
      logger: createLogger({ service: "svc", level: "silent" }),
    });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    return jfast;
  }

  it("lists the running scheduler's schedules with their next ticks in UTC", async () => {
    const jfast = await app({
      toml: `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nscheduler = true\n`,
      tasks: [
        defineTask("svc.refresh_rates", { every: { minutes: 5 } }, async () => {}),
        defineTask("svc.nightly_report", { cron: "0 3 * * *", timezone: "America/Mexico_City" }, async () => {}),
      ],
    });
    const { status, data } = await call(jfast, "schedules.list", { token: VIEWER, input: { count: 3 } });
    expect(status).toBe(200);
    expect(data).toMatchObject({ enabled: true, described: true, error: null });
    const byTask = Object.fromEntries(data.schedules.map((s: { task: string }) => [s.task, s]));
    expect(byTask["svc.refresh_rates"]).toMatchObject({ kind: "every", expression: "every 5 minutes", timezone: "UTC", late: false, missedTicks: 0 });
    const ticks: string[] = byTask["svc.refresh_rates"].nextTicks;
    expect(ticks).toHaveLength(3);
    // Intervals count from the epoch: every tick is a multiple of five minutes, five minutes apart.
    for (const tick of ticks) expect(Date.parse(tick) % 300_000).toBe(0);
    expect(Date.parse(ticks[1]!) - Date.parse(ticks[0]!)).toBe(300_000);
    const nightly = byTask["svc.nightly_report"];
    expect(nightly).toMatchObject({ kind: "cron", expression: "0 3 * * *", timezone: "America/Mexico_City" });
    // 03:00 in Mexico City (UTC-6, no DST since 2022) is 09:00 UTC.
    for (const tick of nightly.nextTicks) expect(tick).toMatch(/T09:00:00\.000Z$/);
  });

  it("draws the contracts graph of the service root with the checker's violations on their edges", async () => {
    const jfast = await createJfast({
      root: fileURLToPath(new URL("../fixtures/admin-contracts/", import.meta.url)),
      env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER}` },
      logger: createLogger({ service: "receipts", level: "silent" }),
    });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const { status, data } = await call(jfast, "contracts.graph", { token: VIEWER });
    expect(status).toBe(200);
    expect(data.source).toBe("contracts");
    const edge = (kind: string, from: string, to: string) => data.edges.find((e: { kind: string; from: string; to: string }) => e.kind === kind && e.from === from && e.to === to);
    expect(edge("publishes", "module:receipt", "event:receipt.registered")).toMatchObject({ declared: true, violations: [] });
    expect(edge("subscribes", "event:receipt.registered", "module:alert")).toMatchObject({ violations: [] });
    // A subscriber to an event no module publishes, and an event built without being declared.
    expect(edge("subscribes", "event:invoice.paid", "module:alert").violations.map((v: { code: string }) => v.code)).toEqual(["orphan-subscription"]);
    expect(edge("publishes", "module:receipt", "event:receipt.rejected").violations.map((v: { code: string }) => v.code)).toEqual(["undeclared-event"]);
  });

  it("shows a broken contracts.toml as a violation and still draws what the tasks reveal", async () => {
    const jfast = await app({
      toml: `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
      files: { "contracts.toml": `[modules.receipt\npublishes = 3\n` },
      tasks: [defineTask("svc.work", async () => {})],
    });
    const { data } = await call(jfast, "contracts.graph", { token: VIEWER });
    expect(data.source).toBe("registry");
    expect(data.nodes).toEqual([{ id: "module:svc", kind: "module", label: "svc" }]);
    expect(data.violations.map((v: { code: string }) => v.code)).toEqual(["contracts-file"]);
  });

  it("audits a mutation the backend failed, with the error, and answers 500 naming the backend", async () => {
    // The memory backend with retries refused, as a broken connection would refuse them.
    class RefusingBackend extends MemoryBackend {
      override async retryDead(): Promise<never> {
        throw new BackendError("connection reset by peer", {});
      }
    }
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-refusing-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`);
    const jfast = await createJfast({ root, backend: new RefusingBackend(), env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},ops:operator:${OPERATOR}` }, logger: createLogger({ service: "svc", level: "silent" }) });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const answer = await call(jfast, "deadLetters.retry", { token: OPERATOR, input: { ids: ["a"] }, mutation: true });
    expect(answer.status).toBe(500);
    expect(answer.error?.message).toContain("on the memory queue: connection reset by peer");
    const audit = await call(jfast, "audit.list", { token: VIEWER });
    expect(audit.data.entries).toHaveLength(1);
    expect(audit.data.entries[0]).toMatchObject({ actor: "ops", action: "deadLetters.retry", ids: ["a"] });
    expect(audit.data.entries[0].outcome.error).toContain("connection reset by peer");
  });
});
