import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, sql } from "./services.js";

// `jfast jobs update <id>`: a scheduled job's payload, priority and run time edited in place, checked against the
// task's schema and audited; a job that no longer waits is refused. A separate process on the real PostgreSQL.

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast jobs update", () => {
  it("edits a scheduled job's payload, priority and run time; a bad payload or a job that no longer waits changes nothing", { timeout: 120_000 }, async () => {
    const schema = `jfast_cli_update_${randomBytes(4).toString("hex")}`;
    cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    const service = await createServiceRoot({
      "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ["database", "queue"]`, `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`, `[plugin.queue]\nbackend = "postgres"`].join("\n"),
      "modules/mail/tasks.ts": `import { task } from "@jfast/runtime";
const schema = { "~standard": { version: 1, vendor: "test", validate: (v: any) => typeof v?.to === "string" ? { value: v } : { issues: [{ message: "to must be a string", path: ["to"] }] } } };
export const send = task("mail.send", { schema }, async () => {});
`,
    });
    cleanups.push(service.remove);
    const root = ["--root", service.root];
    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", "--payload", '{"to":"a@example.com","subject":"hi"}', "--delay", "3600", ...root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = enqueued.stdout.trim();
    const row = async () =>
      (await sql<{ state: string; payload: unknown; priority: number; available_at: Date }>(`SELECT state, payload, priority, available_at FROM "${schema}".jfast_jobs WHERE id = $1`, [id]))[0]!;
    const before = await row();

    expect((await runJfast(["jobs", "update", id, ...root])).code).toBe(2);
    expect((await runJfast(["jobs", "update", id, "--priority", "12", ...root])).code).toBe(2);
    expect((await runJfast(["jobs", "update", id, "--run-at", "2027-01-01T00:00:00Z", "--delay", "5m", ...root])).code).toBe(2);
    const refused = await runJfast(["jobs", "update", id, "--payload", '{"to":7}', ...root]);
    expect(refused.stderr).toContain("PAYLOAD_INVALID");
    expect(refused.code, refused.stderr).toBe(1);
    expect(await row()).toEqual(before);

    const edited = await runJfast(["jobs", "update", id, "--payload", '{"to":"b@example.com","subject":"hi"}', "--priority", "1", "--run-at", "2027-01-01T08:00:00Z", "--json", ...root]);
    expect(edited.code, edited.stderr).toBe(0);
    expect(JSON.parse(edited.stdout)).toEqual({ id, task: "mail.send", state: "scheduled", priority: 1, availableAt: "2027-01-01T08:00:00.000Z", payloadChanges: 1 });
    expect(await row()).toEqual({ state: "ready", payload: { to: "b@example.com", subject: "hi" }, priority: 1, available_at: new Date("2027-01-01T08:00:00Z") });
    const [entry] = await sql<{ action: string; ids: string[]; outcome: Record<string, unknown> }>(`SELECT action, ids, outcome FROM "${schema}".jfast_admin_audit WHERE action = 'jobs.update'`);
    expect(entry).toMatchObject({
      action: "jobs.update",
      ids: [id],
      outcome: { changes: [{ path: "to", before: "a@example.com", after: "b@example.com" }], priority: { before: 5, after: 1 }, runAt: { after: "2027-01-01T08:00:00.000Z" } },
    });

    await sql(`UPDATE "${schema}".jfast_jobs SET state = 'running', locked_by = 'w1', locked_until = now() + interval '1 hour' WHERE id = $1`, [id]);
    const claimed = await runJfast(["jobs", "update", id, "--delay", "0", ...root]);
    expect(claimed.code).toBe(1);
    expect(claimed.stderr).toContain("JOB_NOT_EDITABLE");
    expect(claimed.stderr).toContain("is running");
  });
});
