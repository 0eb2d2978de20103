import { randomBytes, randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { createJfast, task } from "@jfast/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, sql } from "./services.js";

// Every repair from the command line (`jfast jobs retry | discard | cancel | run-now | delete`, `jfast queue
// pause | resume`, `jfast outbox retry | discard`) runs the admin API's own operation, so each writes the same
// audit entry the same action from the dashboard writes, with the actor cli:<os user> or the name given by --as. As separate processes,
// on the real PostgreSQL (a schema of its own; the trail is its jfast_admin_audit table).

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

  it("jfast jobs discard, cancel, run-now and delete each write one audit entry naming cli:<user>", { timeout: 180_000 }, async () => {
    const { schema, root } = await postgresService();
    const actor = `cli:${userInfo().username}`;
    const enqueue = async (...extra: string[]) => {
      const enqueued = await runJfast(["jobs", "enqueue", "mail.send", ...extra, ...root]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      return enqueued.stdout.trim();
    };
    const dead = await enqueue();
    const deadToo = await enqueue();
    await sql(`UPDATE "${schema}".jfast_jobs SET state = 'dead', died_at = now(), attempts = 1 WHERE id = ANY($1)`, [[dead, deadToo]]);
    const [toCancel, toRun, toDelete] = [await enqueue("--delay", "3600"), await enqueue("--delay", "3600"), await enqueue("--delay", "3600")];

    const steps: Array<[string[], number, Partial<AuditRow>]> = [
      [["jobs", "discard", dead, "no-such-job"], 1, { action: "deadLetters.discard", ids: [dead, "no-such-job"], filter: null, outcome: { discarded: 1, missing: 1, missingIds: ["no-such-job"] } }],
      [["jobs", "discard", "--all", "--yes"], 0, { action: "deadLetters.discard", ids: [deadToo], filter: { all: true }, outcome: { discarded: 1, missing: 0 } }],
      [["jobs", "cancel", toCancel], 0, { action: "jobs.cancel", ids: [toCancel], filter: null, outcome: { cancelled: true, state: "cancelled" } }],
      [["jobs", "run-now", toRun], 0, { action: "jobs.runNow", ids: [toRun], filter: null, outcome: expect.objectContaining({ done: true }) }],
      [["jobs", "delete", toDelete], 0, { action: "jobs.delete", ids: [toDelete], filter: null, outcome: expect.objectContaining({ done: true }) }],
    ];
    for (const [args, code, expected] of steps) await expectOneEntry(schema, [...args, ...root], code, { actor, role: "operator", ...expected });

    const states = await sql<{ id: string; state: string; due: boolean }>(`SELECT id, state, available_at <= now() AS due FROM "${schema}".jfast_jobs WHERE id = ANY($1)`, [[dead, deadToo, toCancel, toRun, toDelete]]);
    expect(Object.fromEntries(states.map((s) => [s.id, s.state]))).toEqual({ [toCancel]: "cancelled", [toRun]: "ready" });
    expect(states.find((s) => s.id === toRun)!.due).toBe(true);
  });

  it("jfast outbox retry and discard each write one audit entry naming cli:<user>", { timeout: 120_000 }, async () => {
    const { schema, root } = await postgresService({ outbox: true });
    const actor = `cli:${userInfo().username}`;
    const error = JSON.stringify([{ attempt: 1, at: new Date().toISOString(), class: "OutboxUndeliverable", message: "no event bus", reason: "undeliverable" }]);
    await sql(
      `INSERT INTO "${schema}".jfast_outbox (id, kind, destination, body, state, attempts, died_at, errors) VALUES
         ('event:receipts:e-1', 'event', 'receipts', '{"id":"e-1","type":"receipt.voided"}', 'dead', 1, now(), $1),
         ('event:receipts:e-2', 'event', 'receipts', '{"id":"e-2","type":"receipt.voided"}', 'dead', 1, now(), $1)`,
      [error],
    );
    await expectOneEntry(schema, ["outbox", "retry", "event:receipts:e-1", "event:nope:1", ...root], 1, {
      actor,
      role: "operator",
      action: "outbox.retry",
      ids: ["event:receipts:e-1", "event:nope:1"],
      filter: null,
      outcome: { retried: 1, missing: 1 },
    });
    await expectOneEntry(schema, ["outbox", "discard", "--all", "--yes", ...root], 0, {
      actor,
      role: "operator",
      action: "outbox.discard",
      ids: ["event:receipts:e-2"],
      filter: { all: true },
      outcome: { discarded: 1, missing: 0 },
    });
    expect(await sql(`SELECT id, state FROM "${schema}".jfast_outbox ORDER BY id`)).toEqual([{ id: "event:receipts:e-1", state: "pending" }]);
  });

  it("jfast jobs retry <id> writes an entry the admin API's audit.list shows with the CLI actor, as its own deadLetters.retry does; --as names another", { timeout: 180_000 }, async () => {
    const { schema, root } = await postgresService({ modules: false });
    const viewer = `auditor:viewer:${randomBytes(16).toString("hex")}`;
    const operator = `console:operator:${randomBytes(16).toString("hex")}`;
    const send = task("mail.send", async () => {});
    const jfast = await createJfast({ root: root[1]!, tasks: [send], env: { JFAST_ADMIN_TOKENS: `${viewer},${operator}` }, background: false });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const admin = async <T>(procedure: string, token: string, input: unknown, mutation = false): Promise<T> => {
      const headers: Record<string, string> = { authorization: `Bearer ${token.split(":").slice(2).join(":")}` };
      const url = `http://service/jfast/admin/${procedure}`;
      const response = await jfast.fetch(
        mutation
          ? new Request(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(input) })
          : new Request(`${url}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers }),
      );
      const body = (await response.json()) as { result?: { data: T }; error?: unknown };
      expect(response.status, JSON.stringify(body.error)).toBe(200);
      return body.result!.data;
    };
    const deadLetters = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await jfast.require("queue").enqueue(send.job({}))).jobs[0]!.id);
      await sql(`UPDATE "${schema}".jfast_jobs SET state = 'dead', died_at = now(), attempts = 1 WHERE id = ANY($1)`, [ids]);
      return ids;
    };
    const [byCli, byOncall, byApi] = await deadLetters(3);
    const list = async () => (await admin<{ store: string; entries: Array<Record<string, unknown>> }>("audit.list", viewer, { limit: 10 })).entries;

    const retried = await runJfast(["jobs", "retry", byCli!, ...root]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe(`retried ${byCli}\n`);
    const [cliEntry, ...older] = await list();
    expect(older).toEqual([]);
    expect(cliEntry).toMatchObject({ actor: `cli:${userInfo().username}`, role: "operator", action: "deadLetters.retry", ids: [byCli], outcome: { retried: 1, missing: 0 } });

    const asOncall = await runJfast(["jobs", "retry", byOncall!, "--as", "ops-oncall", ...root]);
    expect(asOncall.code, asOncall.stderr).toBe(0);
    const afterOncall = await list();
    expect(afterOncall).toHaveLength(2);
    expect(afterOncall[0]).toMatchObject({ actor: "ops-oncall", role: "operator", action: "deadLetters.retry", ids: [byOncall] });

    // The admin API's own retry writes the same entry, but for who did it.
    await admin("deadLetters.retry", operator, { ids: [byApi] }, true);
    const [apiEntry] = await list();
    expect(apiEntry).toMatchObject({ actor: "console", role: "operator", ids: [byApi] });
    const shape = (entry: Record<string, unknown>) => ({ ...entry, id: null, at: null, actor: null, ids: null });
    expect(Object.keys(apiEntry!).sort()).toEqual(Object.keys(cliEntry!).sort());
    expect(shape(apiEntry!)).toEqual(shape(cliEntry!));
  });

  it("--as refuses a name that is not printable or too long before anything is done or audited", { timeout: 120_000 }, async () => {
    const { schema, root } = await postgresService();
    const entries = async () => (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".jfast_admin_audit`))[0]!.n;
    const before = await entries();
    for (const [args, why] of [
      [["jobs", "retry", "--all", "--as", "ops\noncall"], "must be printable"],
      [["queue", "pause", "mail.send", "--as", "x".repeat(201)], "at most 200 characters"],
      [["outbox", "discard", "--all", "--yes", "--as", "   "], "cannot be empty or blank"],
    ] as const) {
      const ran = await runJfast([...args, ...root]);
      expect(ran.code, ran.stderr).toBe(2);
      expect(ran.stderr).toContain(why);
    }
    expect(await entries()).toBe(before);
    expect((await runJfast(["jobs", "delete", "--help"])).stdout).toContain("--as NAME");
  });
});

/** A service on the real PostgreSQL, in a schema of its own, with the task mail.send (in modules/, or given by the test). */
async function postgresService(options: { outbox?: boolean; modules?: boolean } = {}): Promise<{ schema: string; root: string[] }> {
  const schema = `jfast_cli_audit_${randomBytes(4).toString("hex")}`;
  cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  const plugins = ["database", "queue", ...(options.outbox ? ["outbox"] : [])];
  const service = await createServiceRoot({
    "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ${JSON.stringify(plugins)}`, `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"`, `[plugin.queue]\nbackend = "postgres"`].join("\n"),
    ...(options.modules === false ? {} : { "modules/mail/tasks.ts": `import { task } from "@jfast/runtime";\nexport const send = task("mail.send", async () => {});\n` }),
  });
  cleanups.push(service.remove);
  // The schema and its tables exist once a command has opened the service.
  const opened = await runJfast(["jobs", "dead", "--root", service.root]);
  expect(opened.code, opened.stderr).toBe(0);
  return { schema, root: ["--root", service.root] };
}

/** Runs one command and checks it wrote exactly one audit entry, the newest, matching `expected`. */
async function expectOneEntry(schema: string, args: string[], code: number, expected: Partial<AuditRow>): Promise<void> {
  const before = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".jfast_admin_audit`);
  const ran = await runJfast(args);
  expect(ran.code, `${args.join(" ")}: ${ran.stderr}`).toBe(code);
  expect(ran.stderr).not.toContain("audit trail is kept in each process's memory");
  const rows = await sql<AuditRow>(`SELECT actor, role, action, ids, filter, outcome FROM "${schema}".jfast_admin_audit ORDER BY at DESC, id DESC`);
  expect(rows.length, args.join(" ")).toBe(before[0]!.n + 1);
  expect(rows[0], args.join(" ")).toMatchObject(expected);
}
