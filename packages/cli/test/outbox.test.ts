import { randomBytes, randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, REDIS_URL, dropRedisQueue, redisServiceToml, sql } from "./services.js";

// `jfast outbox dead | retry | discard` as separate processes, on the real PostgreSQL (a schema of its own)
// with the Redis queue on 127.0.0.1:6379. A missing server fails the test.


const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast outbox", () => {
  it("lists dead rows newest first, retries by id (unknown ids on stderr, exit 1) and discards with --all --yes", { timeout: 120_000 }, async () => {
    const schema = `jfast_cli_outbox_${randomBytes(4).toString("hex")}`;
    const queue = `jfast-test.cli-outbox.${randomUUID().slice(0, 8)}`;
    cleanups.push(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`), () => dropRedisQueue(queue));
    const service = await createServiceRoot({
      "jfast.toml": redisServiceToml({ schema, queue }),
    });
    cleanups.push(service.remove);
    const root = ["--root", service.root];

    const empty = await runJfast(["outbox", "dead", ...root]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe("no dead outbox rows\n");

    // Dead rows as the relay leaves them (the relay's own behaviour is tested in the runtime's suite).
    const jobId = randomUUID();
    const body = { id: jobId, task: "svc.noop", payload: {}, attempts: 0, maxAttempts: 3, availableAt: new Date().toISOString(), createdAt: new Date().toISOString(), tenantId: null, requestId: null, trace: null, errors: [], timeoutMs: null };
    const error = (message: string, reason?: string) => JSON.stringify([{ attempt: 1, at: new Date().toISOString(), class: "OutboxUndeliverable", message, ...(reason ? { reason } : {}) }]);
    await sql(
      `INSERT INTO "${schema}".jfast_outbox (id, kind, destination, body, state, attempts, died_at, errors) VALUES
         ($1, 'job', $2, $3, 'dead', 3, now() - interval '1 minute', $4),
         ('event:receipts:e-1', 'event', 'receipts', '{"id":"e-1","type":"receipt.voided"}', 'dead', 1, now(), $5)`,
      [`job:${queue}:${jobId}`, queue, JSON.stringify(body), error("the queue refused"), error("this service has no event bus", "undeliverable")],
    );

    const listed = await runJfast(["outbox", "dead", "--json", ...root]);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; kind: string; lastError: { message: string } }>;
    expect(rows.map((r) => r.id)).toEqual(["event:receipts:e-1", `job:${queue}:${jobId}`]);
    expect(rows[0]).toMatchObject({ kind: "event", lastError: { message: "this service has no event bus" } });
    const human = await runJfast(["outbox", "dead", ...root]);
    expect(human.stdout).toMatch(/event:receipts:e-1\s+1\/10\s+.*OutboxUndeliverable: this service has no event bus \[undeliverable\]/);

    const retried = await runJfast(["outbox", "retry", `job:${queue}:${jobId}`, "job:nope:1", ...root]);
    expect(retried.code).toBe(1);
    expect(retried.stdout).toBe(`retried job:${queue}:${jobId}\n`);
    expect(retried.stderr).toContain("jfast: job:nope:1 is not a dead outbox row");
    const [row] = await sql<{ state: string }>(`SELECT state FROM "${schema}".jfast_outbox WHERE id = $1`, [`job:${queue}:${jobId}`]);
    expect(["pending", "delivered"]).toContain(row!.state);

    const refused = await runJfast(["outbox", "discard", "--all", ...root]);
    expect(refused.code).toBe(2);
    const discarded = await runJfast(["outbox", "discard", "--all", "--yes", ...root]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(discarded.stdout).toBe("discarded event:receipts:e-1\n");
    expect(await sql(`SELECT id FROM "${schema}".jfast_outbox WHERE state = 'dead'`)).toEqual([]);
  });
});
