import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DASHBOARD, OPERATOR, VIEWER, call, eventually, startAdminApp, type AdminApp, type AdminBackendSetup } from "./admin-harness.js";

/** Every admin procedure, over HTTP, against one backend. Each backend adds a tiny entry file. */
export function describeAdminRouter(name: string, setup: () => Promise<AdminBackendSetup>, expectAuditStore: "memory" | "sql"): void {
  describe(`${name}: admin router`, () => {
    let app: AdminApp;
    beforeEach(async () => {
      app = await startAdminApp({ setup });
    });
    afterEach(async () => {
      await app.close();
    });

    it("refuses calls without a valid bearer token", async () => {
      const missing = await call(app.jfast, "overview.get", { token: null });
      expect(missing.status).toBe(401);
      expect(missing.error?.data.code).toBe("UNAUTHORIZED");
      const wrong = await call(app.jfast, "overview.get", { token: "operator-token-0002" });
      expect(wrong.status).toBe(401);
      const bad = await call(app.jfast, "deadLetters.retry", { token: `x${OPERATOR}`, input: { ids: ["a"] }, mutation: true });
      expect(bad.status).toBe(401);
    });

    it("shows depths, health, tasks and the caller's role", async () => {
      await app.killCharges(2);
      const { status, data } = await call(app.jfast, "overview.get", { token: VIEWER });
      expect(status).toBe(200);
      expect(data.service).toBe("billing");
      expect(data.you.role).toBe("viewer");
      expect(data.queue).toMatchObject({ enabled: true, backend: app.backend.kind, depths: { dead: 2, ready: 0, running: 0 } });
      expect(data.readiness.status).toBe("degraded");
      expect(data.readiness.checks.queue.dead).toBe(2);
      expect(data.tasks.map((t: { name: string }) => t.name)).toContain("billing.charge");
      expect(data.auditStore).toBe(expectAuditStore);
      const who = await call(app.jfast, "overview.whoami", { token: OPERATOR });
      expect(who.data).toEqual({ service: "billing", name: "alice", role: "operator" });
    });

    it("lists dead letters newest first with the error that killed them; jobs.get has every attempt's error and stack", async () => {
      const [first] = await app.killCharges(1);
      const [second] = await app.killCharges(1);
      const { data } = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 10 } });
      expect(data.items.map((d: { id: string }) => d.id)).toEqual([second, first]);
      const dead = data.items[1];
      expect(dead.lastError).toMatchObject({ class: "CardDeclined", message: "card declined for invoice inv-0 (attempt 2)", attempt: 2 });
      expect(dead.lastError.stack).toBeUndefined();
      expect(dead.group).toBe("CardDeclined: card declined for invoice inv-<n> (attempt <n>)");
      const detail = (await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: first } })).data.job;
      expect(detail.errors.map((e: { message: string }) => e.message)).toEqual([
        "card declined for invoice inv-0 (attempt 1)",
        "card declined for invoice inv-0 (attempt 2)",
      ]);
      expect(detail.errors[1].stack).toContain("CardDeclined: card declined");
    });

    it("paginates with a cursor and filters by task, tenant and error text", async () => {
      await app.killCharges(5, (i) => ({ invoice: `inv-${i}` }));
      await app.jfast.require("queue").enqueue(new (await import("../../src/core/job.js")).Job({ task: "billing.send_receipt", tenantId: "acme", maxAttempts: 1 }));
      await eventually("the receipt dead", async () => (await app.backend.depths()).dead === 6);
      const page1 = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 4 } });
      expect(page1.data.items).toHaveLength(4);
      const page2 = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 4, cursor: page1.data.nextCursor } });
      expect(page2.data.items).toHaveLength(2);
      expect(page2.data.nextCursor).toBeNull();
      const ids = new Set([...page1.data.items, ...page2.data.items].map((d: { id: string }) => d.id));
      expect(ids.size).toBe(6);

      const byTask = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { task: "billing.send_receipt" } } });
      expect(byTask.data.items.map((d: { task: string }) => d.task)).toEqual(["billing.send_receipt"]);
      const byTenant = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { tenantId: "acme" } } });
      expect(byTenant.data.items).toHaveLength(1);
      const byText = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { filter: { errorText: "MAILER" } } });
      expect(byText.data.items.map((d: { lastError: { class: string } }) => d.lastError.class)).toEqual(["TypeError"]);
      const filteredPage = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 2, filter: { task: "billing.charge" } } });
      expect(filteredPage.data.items).toHaveLength(2);
      const rest = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 10, cursor: filteredPage.data.nextCursor, filter: { task: "billing.charge" } } });
      expect(rest.data.items).toHaveLength(3);
    });

    it("groups dead letters by error class and normalised message, and previews bulk counts", async () => {
      await app.killCharges(3);
      await app.jfast.require("queue").enqueue(new (await import("../../src/core/job.js")).Job({ task: "billing.send_receipt", maxAttempts: 1 }));
      await eventually("four dead", async () => (await app.backend.depths()).dead === 4);
      const { data } = await call(app.jfast, "deadLetters.groups", { token: VIEWER });
      expect(data.groups.map((g: { key: string; count: number }) => [g.key, g.count])).toEqual([
        ["CardDeclined: card declined for invoice inv-<n> (attempt <n>)", 3],
        ["TypeError: mailer is not configured", 1],
      ]);
      const preview = await call(app.jfast, "deadLetters.preview", { token: VIEWER, input: { filter: { group: data.groups[0].key } } });
      expect(preview.data).toEqual({ count: 3, exact: true });
      const all = await call(app.jfast, "deadLetters.preview", { token: VIEWER, input: {} });
      expect(all.data).toEqual({ count: 4, exact: true });
    });

    it("a viewer cannot retry or discard: FORBIDDEN, nothing changes, nothing audited", async () => {
      const [id] = await app.killCharges(1);
      for (const procedure of ["deadLetters.retry", "deadLetters.discard"]) {
        const answer = await call(app.jfast, procedure, { token: VIEWER, input: { ids: [id] }, mutation: true });
        expect(answer.status).toBe(403);
        expect(answer.error?.data.code).toBe("FORBIDDEN");
        expect(answer.error?.message).toContain("operator");
      }
      const bulk = await call(app.jfast, "deadLetters.retryMatching", { token: VIEWER, input: {}, mutation: true });
      expect(bulk.status).toBe(403);
      expect((await app.backend.depths()).dead).toBe(1);
      const audit = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(audit.data.entries).toEqual([]);
    });

    it("a dashboard's token acts for the person it names: their role decides, the audit trail names them, their role and the dashboard", async () => {
      const [id] = await app.killCharges(1);
      // Without a person, a dashboard's token only reads.
      const own = await call(app.jfast, "overview.whoami", { token: DASHBOARD });
      expect(own.data).toEqual({ service: "billing", name: "ops-dashboard", role: "viewer", via: "ops-dashboard" });
      const nobody = await call(app.jfast, "deadLetters.retry", { token: DASHBOARD, input: { ids: [id] }, mutation: true });
      expect(nobody.status).toBe(403);
      // A viewer in the dashboard is a viewer here, whatever the dashboard's token could do.
      const viewer = await call(app.jfast, "deadLetters.retry", { token: DASHBOARD, actor: "viewer vic", input: { ids: [id] }, mutation: true });
      expect(viewer.status).toBe(403);
      expect(viewer.error?.message).toContain('vic has the viewer role in the dashboard "ops-dashboard"');
      // A forged person on an ordinary token changes nothing: the token acts as itself.
      const forged = await call(app.jfast, "overview.whoami", { token: VIEWER, actor: "admin mallory" });
      expect(forged.data.role).toBe("viewer");
      expect(forged.data.name).not.toBe("mallory");
      const who = await call(app.jfast, "overview.whoami", { token: DASHBOARD, actor: "admin ann%40example.com" });
      expect(who.data).toEqual({ service: "billing", name: "ann@example.com", role: "operator", via: "ops-dashboard", actorRole: "admin" });
      const retried = await call(app.jfast, "deadLetters.retry", { token: DASHBOARD, actor: "admin ann%40example.com", input: { ids: [id] }, mutation: true });
      expect(retried.status).toBe(200);
      const forgedRetry = await call(app.jfast, "deadLetters.discard", { token: OPERATOR, actor: "admin mallory", input: { ids: ["no-such-job"] }, mutation: true });
      expect(forgedRetry.status).toBe(200);
      const audit = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(audit.data.entries.map((e: { actor: string; role: string; via: string | null; action: string }) => [e.actor, e.role, e.via, e.action])).toEqual([
        ["alice", "operator", null, "deadLetters.discard"],
        ["ann@example.com", "admin", "ops-dashboard", "deadLetters.retry"],
      ]);
    });

    it("an operator retries one dead letter: it runs again with attempts reset, and the action is audited", async () => {
      const [id, other] = await app.killCharges(2);
      const answer = await call(app.jfast, "deadLetters.retry", { token: OPERATOR, input: { ids: [id, "no-such-job"] }, mutation: true });
      expect(answer.status).toBe(200);
      expect(answer.data).toEqual({ retried: [id], missing: ["no-such-job"] });
      // It ran again (attempts 1 and 2 failed anew) and died again: four errors recorded in total.
      const detail = await eventually("the retried job to die again", async () => {
        const { data, error } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
        if (error) throw new Error(JSON.stringify(error));
        // A job waiting in RabbitMQ cannot be looked up by id (job null, with the reason): wait for its death.
        return data.job?.state === "dead" && data.job.errors.length === 4 ? data : null;
      });
      expect(detail.job.attempts).toBe(2);
      // The drawer's mark: after the first two attempts, retried by alice, at the audited moment (attempts reset).
      const audit = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(detail.job.retries).toEqual([{ afterErrors: 2, at: audit.data.entries[0].at, actor: "alice", role: "operator", via: null, action: "deadLetters.retry" }]);
      expect(detail.job.errors.map((e: { attempt: number }) => e.attempt)).toEqual([1, 2, 1, 2]);
      expect(audit.data.entries).toHaveLength(1);
      expect(audit.data.entries[0]).toMatchObject({ actor: "alice", role: "operator", action: "deadLetters.retry", ids: [id, "no-such-job"], outcome: { retried: 1, missing: 1 } });
      expect(Date.parse(audit.data.entries[0].at)).toBeGreaterThan(Date.now() - 60_000);
      const still = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: other } });
      expect(still.data.job.errors).toHaveLength(2);
      expect(still.data.job.retries).toEqual([]);
      const tasks = await call(app.jfast, "overview.tasks", { token: VIEWER });
      expect(tasks.data.tasks).toContain("billing.charge");
    });

    it("retries all matching a filter, discards one and all, each audited", async () => {
      const charges = await app.killCharges(3);
      await app.jfast.require("queue").enqueue(new (await import("../../src/core/job.js")).Job({ task: "billing.send_receipt", maxAttempts: 1 }));
      await eventually("four dead", async () => (await app.backend.depths()).dead === 4);
      await app.jfast.createWorker().stop({ graceMs: 0 });

      const discarded = await call(app.jfast, "deadLetters.discard", { token: OPERATOR, input: { ids: [charges[0]] }, mutation: true });
      expect(discarded.data).toEqual({ discarded: [charges[0]], missing: [] });
      expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: charges[0] } })).data.job).toBeNull();

      const retried = await call(app.jfast, "deadLetters.retryMatching", { token: OPERATOR, input: { filter: { task: "billing.send_receipt" } }, mutation: true });
      expect(retried.data).toMatchObject({ total: 1, totalExact: true, ratePerSecond: 100 });
      await eventually("the replay to finish", async () => {
        const replays = (await call(app.jfast, "deadLetters.replays", { token: VIEWER })).data;
        return replays[0]?.replayId === retried.data.replayId && replays[0].state === "finished" && replays[0].done === 1;
      });
      await eventually("the receipt dead again", async () => (await app.backend.depths()).dead === 3);

      const gone = await call(app.jfast, "deadLetters.discardMatching", { token: OPERATOR, input: {}, mutation: true });
      expect(gone.data.discarded).toBe(3);
      expect((await app.backend.depths()).dead).toBe(0);

      const audit = await call(app.jfast, "audit.list", { token: VIEWER });
      expect(audit.data.entries.map((e: { action: string }) => e.action)).toEqual([
        "deadLetters.discardMatching",
        "deadLetters.replay",
        "deadLetters.retryMatching",
        "deadLetters.discard",
      ]);
      expect(audit.data.entries[2].filter).toEqual({ task: "billing.send_receipt" });
      expect(audit.data.entries[1]).toMatchObject({ count: 1, outcome: { replayId: retried.data.replayId, state: "finished", done: 1, failed: 0 } });
      expect(audit.data.entries[0].count).toBe(3);
    });

    it("shows a job's detail with redacted payload fields", async () => {
      const [id] = await app.killCharges(1, () => ({ invoice: "inv-9", card: { card_number: "4242424242424242", brand: "visa" } }));
      const { data } = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
      expect(data.job).toMatchObject({ id, task: "billing.charge", state: "dead", priority: 5, attempts: 2, maxAttempts: 2 });
      expect(data.job.payload).toEqual({ invoice: "inv-9", card: { card_number: "[redacted]", brand: "visa" } });
      const list = await call(app.jfast, "deadLetters.list", { token: VIEWER });
      expect(JSON.stringify(list.data)).not.toContain("4242424242424242");
      expect((await call(app.jfast, "jobs.get", { token: VIEWER, input: { id: "nope" } })).data.job).toBeNull();
    });

    it("keeps __proto__ keys in redacted views, redacting inside them", async () => {
      const payload = JSON.parse('{"invoice":"inv-p","__proto__":{"card_number":"4000000000000002","note":"own key"}}') as Record<string, unknown>;
      const [id] = await app.killCharges(1, () => payload);
      const detail = await call(app.jfast, "jobs.get", { token: VIEWER, input: { id } });
      const shown = detail.data.job.payload as Record<string, unknown>;
      expect(Object.keys(shown)).toEqual(["invoice", "__proto__"]);
      expect(Object.getOwnPropertyDescriptor(shown, "__proto__")?.value).toEqual({ card_number: "[redacted]", note: "own key" });
      const list = await call(app.jfast, "deadLetters.list", { token: VIEWER });
      expect(JSON.stringify(list.data)).toContain('"__proto__":{"card_number":"[redacted]","note":"own key"}');
      expect(JSON.stringify(list.data)).not.toContain("4000000000000002");
    });

    it("answers typed empty results for features that are not running, and the registry's contract graph", async () => {
      expect((await call(app.jfast, "schedules.list", { token: VIEWER })).data).toEqual({ enabled: false, described: false, schedules: [], error: null });
      expect((await call(app.jfast, "outbox.status", { token: VIEWER })).data).toMatchObject({ enabled: false, pending: null, lagSeconds: null });
      expect((await call(app.jfast, "events.status", { token: VIEWER })).data).toEqual({
        enabled: false,
        reported: false,
        group: null,
        error: null,
        turnedOff: false,
        offsetsReadAt: null,
        partitions: [],
      });
      const graph = (await call(app.jfast, "contracts.graph", { token: VIEWER })).data;
      expect(graph.source).toBe("registry");
      expect(graph.nodes).toEqual(
        expect.arrayContaining([
          { id: "module:billing", kind: "module", label: "billing" },
          { id: "module:alert", kind: "module", label: "alert" },
          { id: "event:receipt.registered", kind: "event", label: "receipt.registered" },
        ]),
      );
      expect(graph.edges).toEqual([
        { id: "subscribes:event:receipt.registered->module:alert", kind: "subscribes", from: "event:receipt.registered", to: "module:alert", violations: [] },
      ]);
    });

    it("rejects bad input with 400 and the reason", async () => {
      const answer = await call(app.jfast, "deadLetters.retry", { token: OPERATOR, input: { ids: [] }, mutation: true });
      expect(answer.status).toBe(400);
      expect(answer.error?.message).toMatch(/invalid input: ids: .*(at least|>=)/i);
      const extra = await call(app.jfast, "deadLetters.list", { token: VIEWER, input: { limit: 10, bogus: 1 } });
      expect(extra.status).toBe(400);
      expect(extra.error?.message).toContain("bogus");
    });

    it("is served by jfast.routes() on node:http too, mutations included", async () => {
      const [id] = await app.killCharges(1);
      const routes = app.jfast.routes();
      const server = http.createServer((req, res) => void routes(req, res));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jfast/admin`;
        const viewer = await fetch(`${base}/deadLetters.retry`, { method: "POST", headers: { authorization: `Bearer ${VIEWER}`, "content-type": "application/json" }, body: JSON.stringify({ ids: [id] }) });
        expect(viewer.status).toBe(403);
        const operator = await fetch(`${base}/deadLetters.retry`, { method: "POST", headers: { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" }, body: JSON.stringify({ ids: [id] }) });
        expect(operator.status).toBe(200);
        expect(((await operator.json()) as { result: { data: unknown } }).result.data).toEqual({ retried: [id], missing: [] });
        expect((await fetch(`${base}/overview.get`)).status).toBe(401);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
}
