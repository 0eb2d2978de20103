import { randomBytes } from "node:crypto";
import { userInfo } from "node:os";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast jobs retry` and `jfast queue pause | resume` run the admin API's own operations, so each writes the same
// audit entry a retry or a pause from the dashboard writes, with the actor cli:<os user>. As separate processes,
// on the real PostgreSQL (a schema of its own; the trail is its jfast_admin_audit table).
const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface AuditRow {
  actor: string;
  role: string;
  action: string;
  ids: string[];
  filter: Record<string, unknown> | null;
  outcome: Record<string, unknown>;
}

describe("repairs from the command line are audited", () => {
  it("jfast jobs retry, queue pause and queue resume (of a task and of a queue) each write one audit entry naming cli:<user>", { timeout: 180_000 }, async () => {
    const schema = `jfast_cli_audit_${randomBytes(4).toString("hex")}`;
    cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    const service = await createServiceRoot({
      "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ["database", "queue"]`, `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`, `[plugin.queue]\nbackend = "postgres"`].join("\n"),
      "modules/mail/tasks.ts": `import { task } from "@jfast/runtime";\nexport const send = task("mail.send", async () => {});\n`,
    });
    cleanups.push(service.remove);
    const root = ["--root", service.root];
    const actor = `cli:${userInfo().username}`;

    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", ...root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = enqueued.stdout.trim();
    // A dead letter as a worker leaves one (dying is the worker's, tested in the runtime's suite).
    await sql(`UPDATE "${schema}".jfast_jobs SET state = 'dead', died_at = now(), attempts = 1 WHERE id = $1`, [id]);

    const steps: Array<[string[], Partial<AuditRow>]> = [
      [["jobs", "retry", id, "no-such-job"], { action: "deadLetters.retry", ids: [id, "no-such-job"], outcome: { retried: 1, missing: 1, missingIds: ["no-such-job"] } }],
      [["queue", "pause", "mail.send"], { action: "queues.pause", filter: { task: "mail.send" }, outcome: expect.objectContaining({ paused: true, pausedBy: actor }) }],
      [["queue", "resume", "mail.send"], { action: "queues.resume", filter: { task: "mail.send" }, outcome: { paused: false, wasPaused: true } }],
      [["queue", "pause", "--queue", "default"], { action: "queues.pause", filter: { queue: "default" }, outcome: { paused: true, tasks: ["mail.send"] } }],
      [["queue", "resume", "--queue", "default"], { action: "queues.resume", filter: { queue: "default" }, outcome: { paused: false, resumed: 1 } }],
    ];
    for (const [args, expected] of steps) {
      const before = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".jfast_admin_audit`);
      const ran = await runJfast([...args, ...root]);
      expect(ran.code, `${args.join(" ")}: ${ran.stderr}`).toBe(args[1] === "retry" ? 1 : 0);
      expect(ran.stderr).not.toContain("audit trail is kept in each process's memory");
      const rows = await sql<AuditRow>(`SELECT actor, role, action, ids, filter, outcome FROM "${schema}".jfast_admin_audit ORDER BY at DESC, id DESC`);
      expect(rows.length, args.join(" ")).toBe(before[0]!.n + 1);
      expect(rows[0]).toMatchObject({ actor, role: "operator", ...expected });
    }
    const retried = await sql<{ state: string }>(`SELECT state FROM "${schema}".jfast_jobs WHERE id = $1`, [id]);
    expect(retried[0]!.state).not.toBe("dead");
  });
});
