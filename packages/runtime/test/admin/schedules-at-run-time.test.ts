import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { createLogger } from "../../src/observability/logger.js";
import { DASHBOARD, OPERATOR, VIEWER, call, eventually } from "./admin-harness.js";

/** schedules.create|update|pause|resume|delete|trigger through the admin API, audited by person. */
describe("admin router: schedules at run time", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(): Promise<{ jfast: Jfast; runs: Array<Record<string, unknown>> }> {
    const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-schedules-"));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\nscheduler = true\npoll_interval = 0.05\n`);
    const runs: Array<Record<string, unknown>> = [];
    const jfast = await createJfast({
      root,
      tasks: [
        defineTask("svc.report", async (payload: Record<string, unknown>) => void runs.push(payload)),
        defineTask("svc.nightly", { cron: "0 3 * * *" }, async (payload: Record<string, unknown>) => void runs.push(payload)),
      ],
      env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},alice:operator:${OPERATOR},ops-dashboard:dashboard:${DASHBOARD}` },
      logger: createLogger({ service: "svc", level: "silent" }),
    });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const worker = jfast.createWorker({ concurrency: 2 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    return { jfast, runs };
  }

  const mutate = (jfast: Jfast, procedure: string, input: unknown, actor = "operator ana%40example.com") =>
    call(jfast, procedure, { token: DASHBOARD, actor, mutation: true, input });

  it("creates, lists, edits, pauses, triggers, resumes and deletes a schedule, each change audited by the person", async () => {
    const { jfast, runs } = await app();
    const created = await mutate(jfast, "schedules.create", { name: "ping", task: "svc.report", every: { seconds: 1 }, payload: { from: "admin" } });
    expect(created).toMatchObject({ status: 200, data: { name: "ping", created: true } });
    await eventually("a tick of the new schedule ran", async () => runs.some((r) => r.from === "admin"));

    const listed = await call(jfast, "schedules.list", { token: VIEWER });
    const byName = Object.fromEntries(listed.data.schedules.map((s: { name: string }) => [s.name, s]));
    expect(byName.ping).toMatchObject({ task: "svc.report", kind: "every", expression: "every 1 second", origin: "runtime", paused: false, payload: { from: "admin" }, updatedBy: "ana@example.com" });
    expect(byName["svc.nightly"]).toMatchObject({ origin: "code", paused: false });

    const updated = await mutate(jfast, "schedules.update", { name: "ping", cron: "*/5 * * * *", timezone: "Europe/Paris" });
    expect(updated.data).toMatchObject({ before: { every: { seconds: 1 } }, after: { cron: "*/5 * * * *", timezone: "Europe/Paris", payload: { from: "admin" } } });
    expect((await mutate(jfast, "schedules.pause", { name: "ping" })).data).toMatchObject({ paused: true, origin: "runtime", changed: true });
    const triggered = await mutate(jfast, "schedules.trigger", { name: "ping" });
    expect(triggered.data).toMatchObject({ name: "ping", task: "svc.report" });
    expect((await call(jfast, "jobs.get", { token: VIEWER, input: { id: triggered.data.jobId } })).data.job).toMatchObject({ task: "svc.report" });
    expect((await mutate(jfast, "schedules.resume", { name: "ping" })).data).toMatchObject({ paused: false, changed: true });
    expect((await mutate(jfast, "schedules.delete", { name: "ping" })).data).toEqual({ name: "ping", deleted: true });
    expect((await call(jfast, "schedules.list", { token: VIEWER })).data.schedules.map((s: { name: string }) => s.name)).toEqual(["svc.nightly"]);

    const entries = (await call(jfast, "audit.list", { token: VIEWER })).data.entries as Array<{ action: string; actor: string; ids: string[]; outcome: Record<string, unknown> }>;
    const mine = entries.filter((e) => e.action.startsWith("schedules.")).reverse();
    expect(mine.map((e) => [e.action, e.actor, e.ids])).toEqual(
      ["create", "update", "pause", "trigger", "resume", "delete"].map((a) => [`schedules.${a}`, "ana@example.com", ["ping"]]),
    );
    expect(mine[1]!.outcome).toMatchObject({ before: { every: { seconds: 1 } }, after: { cron: "*/5 * * * *" } });
  });

  it("refuses what a declaration would refuse, edits of a declared schedule, and viewers; nothing is stored", async () => {
    const { jfast } = await app();
    const bad = async (input: Record<string, unknown>, status: number, code: string) => {
      const answer = await mutate(jfast, "schedules.create", { name: "bad", task: "svc.report", ...input });
      expect(answer.status).toBe(status);
      expect(answer.error?.message).toContain(`[${code}]`);
    };
    await bad({ cron: "0 0 L * *" }, 400, "CRON_INVALID");
    await bad({ cron: "0 3 * * *", timezone: "Mars/Olympus" }, 400, "TIMEZONE_INVALID");
    await bad({ task: "svc.missing", cron: "0 3 * * *" }, 400, "SCHEDULE_TASK_UNKNOWN");
    await bad({ name: "svc.nightly", cron: "0 4 * * *" }, 409, "SCHEDULE_DUPLICATE");
    const edit = await mutate(jfast, "schedules.update", { name: "svc.nightly", cron: "0 4 * * *" });
    expect(edit.status).toBe(412);
    expect(edit.error?.message).toContain("[SCHEDULE_DECLARED]");
    expect((await mutate(jfast, "schedules.delete", { name: "svc.nightly" })).status).toBe(412);
    expect((await mutate(jfast, "schedules.pause", { name: "svc.nightly" })).status).toBe(200);
    expect((await mutate(jfast, "schedules.delete", { name: "nope" })).status).toBe(404);
    expect((await mutate(jfast, "schedules.create", { name: "x", task: "svc.report", every: { minutes: 1 } }, "viewer bob")).status).toBe(403);
    const names = (await call(jfast, "schedules.list", { token: VIEWER })).data.schedules.map((s: { name: string; paused: boolean }) => [s.name, s.paused]);
    expect(names).toEqual([["svc.nightly", true]]);
  });
});
