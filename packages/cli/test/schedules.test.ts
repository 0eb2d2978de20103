import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, REDIS_URL, dropRedisQueue, sql } from "./services.js";

// `jfast schedules …` as separate processes against the real stores: each command changes the scheduler's store
// (PostgreSQL's jfast_schedule_definitions, Redis' {<queue>}:schedule:stored) and writes one audit entry.

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TASKS = `import { task } from "@jfast/runtime";
export const send = task("report.send", async () => {});
export const nightly = task("report.nightly", { cron: "0 3 * * *" }, async () => {});
`;

const backends = {
  postgres: (schema: string) => [`[plugin.queue]\nbackend = "postgres"\nscheduler = true`],
  redis: (schema: string) => [`[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "jfast-test.cli-sched.${schema}"\nscheduler = true`],
};

describe("jfast schedules", () => {
  for (const [kind, queueSection] of Object.entries(backends)) {
    it(`creates, lists, edits, pauses, triggers and deletes a schedule on the ${kind} store, each change audited`, { timeout: 180_000 }, async () => {
      const schema = `jfast_cli_sched_${randomBytes(4).toString("hex")}`;
      cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      // The Redis store's schedules and the jobs its triggers enqueued, under the queue's hash tag.
      if (kind === "redis") cleanups.push(() => dropRedisQueue(`jfast-test.cli-sched.${schema}`));
      const service = await createServiceRoot({
        "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ["database", "queue"]`, `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`, ...queueSection(schema)].join("\n"),
        "modules/report/tasks.ts": TASKS,
      });
      cleanups.push(service.remove);
      const jfast = async (...args: string[]) => runJfast(["schedules", ...args, "--root", service.root]);

      const bad = await jfast("create", "weekly", "--task", "report.send", "--cron", "0 0 L * *");
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("cron \"0 0 L * *\"");
      const badZone = await jfast("create", "weekly", "--task", "report.send", "--cron", "0 3 * * *", "--timezone", "Mars/Olympus");
      expect(badZone.code).toBe(2);
      const unknown = await jfast("create", "weekly", "--task", "report.nope", "--every", "5m");
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('task "report.nope"');

      const created = await jfast("create", "weekly", "--task", "report.send", "--cron", "0 8 * * mon", "--timezone", "Europe/Paris", "--payload", '{"span":"week"}');
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toBe("created schedule weekly\n");
      const listed = await jfast("list", "--json");
      expect(listed.code, listed.stderr).toBe(0);
      const schedules = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      expect(schedules.map((s) => [s.name, s.origin, s.paused])).toEqual([
        ["report.nightly", "code", false],
        ["weekly", "runtime", false],
      ]);
      expect(schedules[1]).toMatchObject({ task: "report.send", cron: "0 8 * * mon", timezone: "Europe/Paris", payload: { span: "week" }, updatedBy: `cli:${userInfo().username}` });
      // Mondays 08:00 in Paris: 06:00 or 07:00 UTC.
      for (const tick of schedules[1]!.nextTicks as string[]) expect(tick).toMatch(/T0[67]:00:00\.000Z$/);

      expect((await jfast("update", "weekly", "--every", "1h30m")).stdout).toContain('"every":{"hours":1,"minutes":30}');
      expect((await jfast("pause", "weekly")).stdout).toBe("paused schedule weekly\n");
      expect((await jfast("pause", "report.nightly", "--as", "ops-oncall")).stdout).toBe("paused schedule report.nightly\n");
      const table = await jfast("list");
      expect(table.stdout).toMatch(/^NAME\s+ORIGIN\s+STATE\s+WHEN\s+TASK\s+NEXT TICK\n/);
      expect(table.stdout).toMatch(/report\.nightly\s+code\s+paused\s+0 3 \* \* \*\s+report\.nightly/);
      const triggered = await jfast("trigger", "weekly");
      expect(triggered.code, triggered.stderr).toBe(0);
      const jobId = /job ([0-9a-f-]{36})/.exec(triggered.stdout)![1]!;
      const shown = await runJfast(["jobs", "show", jobId, "--json", "--root", service.root]);
      expect(JSON.parse(shown.stdout)).toMatchObject({ job: { task: "report.send", payload: { span: "week" } } });
      expect((await jfast("resume", "weekly")).stdout).toBe("resumed schedule weekly\n");

      const refused = await jfast("delete", "report.nightly");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("declared in code");
      expect((await jfast("delete", "weekly")).stdout).toBe("deleted schedule weekly\n");
      expect((await jfast("delete", "weekly")).code).toBe(1);

      const audit = await sql<{ actor: string; action: string; ids: string[] }>(`SELECT actor, action, ids FROM "${schema}".jfast_admin_audit WHERE action LIKE 'schedules.%' AND outcome ? 'error' = false ORDER BY at, id`);
      expect(audit.map((a) => [a.action, a.actor, a.ids[0]])).toEqual([
        ["schedules.create", `cli:${userInfo().username}`, "weekly"],
        ["schedules.update", `cli:${userInfo().username}`, "weekly"],
        ["schedules.pause", `cli:${userInfo().username}`, "weekly"],
        ["schedules.pause", "ops-oncall", "report.nightly"],
        ["schedules.trigger", `cli:${userInfo().username}`, "weekly"],
        ["schedules.resume", `cli:${userInfo().username}`, "weekly"],
        ["schedules.delete", `cli:${userInfo().username}`, "weekly"],
      ]);
    });
  }
});
