import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast jobs list`, `jobs run-now` and `jobs delete` as separate processes against the PostgreSQL server on
// 127.0.0.1:5432, each test in a schema of its own. A missing server fails the test.
const PG_URL = "postgres://postgres@127.0.0.1:5432/test";

function files(schema: string): Record<string, string> {
  return {
    "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\n`,
    "modules/mail/tasks.ts": `
import { task } from "@jfast/runtime";
export const send = task("mail.send", async () => undefined);
export const digest = task("mail.digest", async () => undefined);
`,
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function service() {
  const schema = `jfast_cli_${randomUUID().slice(0, 8)}`;
  const created = await createServiceRoot(files(schema));
  cleanups.push(created.remove, async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  return ["--root", created.root];
}

describe("jfast jobs list, run-now and delete on the PostgreSQL queue", () => {
  it("lists scheduled jobs a page at a time, runs one now and deletes another", { timeout: 180_000 }, async () => {
    const root = await service();
    const ids: string[] = [];
    for (const [task, delay] of [["mail.send", "600"], ["mail.digest", "700"], ["mail.send", "800"]] as const) {
      const enqueued = await runJfast(["jobs", "enqueue", task, "--delay", delay, ...root]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      ids.push(enqueued.stdout.trim());
    }

    const first = await runJfast(["jobs", "list", "--state", "scheduled", "--order", "oldest", "--limit", "2", "--json", ...root]);
    expect(first.code, first.stderr).toBe(0);
    const page = JSON.parse(first.stdout) as { rows: Array<{ job: { id: string } }>; next: string | null; exact: boolean };
    expect(page.rows.map((r) => r.job.id)).toEqual(ids.slice(0, 2));
    expect(page.next).not.toBeNull();
    const second = JSON.parse((await runJfast(["jobs", "list", "--state", "scheduled", "--order", "oldest", "--limit", "2", "--after", page.next!, "--json", ...root])).stdout);
    expect(second.rows.map((r: { job: { id: string } }) => r.job.id)).toEqual([ids[2]]);

    const table = await runJfast(["jobs", "list", "--state", "scheduled", "--task", "mail.send", ...root]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+TASK\s+TENANT\s+ATTEMPTS\s+DUE/);
    expect(table.stdout).toContain(ids[2]);
    expect(table.stdout).not.toContain(ids[1]);

    const ran = await runJfast(["jobs", "run-now", ids[0]!, ...root]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe(`due now: ${ids[0]}\n`);
    const ready = JSON.parse((await runJfast(["jobs", "list", "--state", "ready", "--json", ...root])).stdout);
    expect(ready.rows.map((r: { job: { id: string } }) => r.job.id)).toEqual([ids[0]]);

    const deleted = await runJfast(["jobs", "delete", ids[1]!, "no-such-job", ...root]);
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toBe(`deleted ${ids[1]}\n`);
    expect(deleted.stderr).toContain("no job with id no-such-job");
    const shown = await runJfast(["jobs", "show", ids[1]!, ...root]);
    expect(shown.code).toBe(1);
  });

  it("refuses a state it does not know, and --help names the docs page", { timeout: 60_000 }, async () => {
    const bad = await runJfast(["jobs", "list", "--state", "waiting"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--state is one of ready, scheduled, running, completed, dead, cancelled");
    for (const command of ["list", "run-now", "delete"]) {
      const help = await runJfast(["jobs", command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`jfast docs cli#jfast-jobs-${command}`);
    }
  });
});
