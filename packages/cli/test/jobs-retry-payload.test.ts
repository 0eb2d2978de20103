import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, sql } from "./services.js";

// `jfast jobs retry <id> --payload JSON`: the dead letter is replaced by a job with the edited payload, checked
// against the task's schema, and the audit entry keeps what changed. A separate process on the real PostgreSQL.

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast jobs retry --payload", () => {
  it("retries one dead letter with an edited payload; a payload the schema refuses changes nothing", { timeout: 120_000 }, async () => {
    const schema = `jfast_cli_edit_${randomBytes(4).toString("hex")}`;
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
    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", "--payload", '{"to":"a@example.com","subject":"hi"}', ...root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = enqueued.stdout.trim();
    await sql(`UPDATE "${schema}".jfast_jobs SET state = 'dead', died_at = now(), attempts = 1 WHERE id = $1`, [id]);

    const refused = await runJfast(["jobs", "retry", id, "--payload", '{"to":7}', ...root]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("PAYLOAD_INVALID");
    expect((await sql<{ state: string }>(`SELECT state FROM "${schema}".jfast_jobs WHERE id = $1`, [id]))[0]!.state).toBe("dead");

    const retried = await runJfast(["jobs", "retry", id, "--payload", '{"to":"b@example.com","subject":"hi"}', ...root]);
    expect(retried.code, retried.stderr).toBe(0);
    const newId = /as job ([0-9a-f-]{36})/.exec(retried.stdout)![1]!;
    const rows = await sql<{ id: string; state: string; payload: unknown }>(`SELECT id, state, payload FROM "${schema}".jfast_jobs ORDER BY created_at`);
    expect(rows).toEqual([{ id: newId, state: "ready", payload: { to: "b@example.com", subject: "hi" } }]);
    const [entry] = await sql<{ action: string; ids: string[]; outcome: Record<string, unknown> }>(`SELECT action, ids, outcome FROM "${schema}".jfast_admin_audit WHERE outcome ? 'jobId'`);
    expect(entry).toMatchObject({ action: "deadLetters.retry", ids: [id], outcome: { jobId: newId, changes: [{ path: "to", before: "a@example.com", after: "b@example.com" }] } });
  });
});
