import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { resolveConfig } from "../../src/config/load-config.js";
import { Job } from "../../src/core/job.js";
import { openTestBackend, silentLogger } from "./pg-test-env.js";

/** [plugin.queue] keep_completed = false: a completed job's row is deleted; nothing else changes. */
describe("postgres: keep_completed = false", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>>;
  let backend: PostgresBackend;

  beforeAll(async () => {
    env = await openTestBackend();
    backend = createPostgresBackend({ db: env.database.sql, schema: env.schema, queue: "jfast.jobs", keepCompleted: false, logger: silentLogger });
    await backend.setup();
  });

  afterAll(async () => {
    await backend?.close();
    await env?.cleanup();
  });

  const count = async (state: string) =>
    Number((await env.database.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jfast_jobs WHERE state = $1", [state]))[0]!.n);

  it("deletes the rows of completed jobs, and only those the completing worker still holds", async () => {
    const jobs = Array.from({ length: 3 }, () => Object.assign(new Job({ task: "keep.done" }), { maxAttempts: 3 }));
    await backend.enqueue({ jobs });
    const [mine, other, failing] = await backend.claim({ workerId: "w1", limit: 3, leaseMs: 30_000 });
    await backend.complete({ workerId: "w1", job: mine! });
    // A worker that does not hold the lease cannot complete (or delete) the job.
    await backend.complete({ workerId: "w2", job: other! });
    await backend.kill({ workerId: "w1", job: failing!, error: { attempt: 1, at: new Date().toISOString(), class: "Error", message: "boom" } });

    expect(await backend.getJob({ id: mine!.id })).toBeNull();
    expect((await backend.getJob({ id: other!.id }))?.state).toBe("running");
    // Dead letters are kept as always: they are what an operator retries.
    expect((await backend.getJob({ id: failing!.id }))?.state).toBe("dead");
    expect((await backend.listDead({ limit: 10 })).map((d) => d.job.id)).toEqual([failing!.id]);
    expect(await count("completed")).toBe(0);
    expect(await backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 1, dead: 1 });
  });

  it("forgets a completed id: enqueueing it again makes a new job", async () => {
    const job = new Job({ task: "keep.again" });
    await backend.enqueue({ jobs: [job] });
    const [claimed] = await backend.claim({ workerId: "w1", limit: 1, leaseMs: 30_000 });
    await backend.complete({ workerId: "w1", job: claimed! });
    expect((await backend.enqueue({ jobs: [new Job({ task: "keep.again", id: job.id })] })).inserted).toEqual([job.id]);
  });

  it("keeps completed rows by default", async () => {
    const kept = createPostgresBackend({ db: env.database.sql, schema: env.schema, queue: "kept", logger: silentLogger });
    const job = new Job({ task: "keep.default" });
    await kept.enqueue({ jobs: [job] });
    const [claimed] = await kept.claim({ workerId: "w9", limit: 1, leaseMs: 30_000 });
    expect(claimed?.id).toBe(job.id);
    await kept.complete({ workerId: "w9", job: claimed! });
    expect((await kept.getJob({ id: job.id }))?.state).toBe("completed");
    expect((await kept.enqueue({ jobs: [new Job({ task: "keep.default", id: job.id })] })).inserted).toEqual([]);
    await kept.close();
  });

  it("is read from [plugin.queue] keep_completed, true unless set", () => {
    const config = (queue: Record<string, unknown>) =>
      resolveConfig({
        root: "/srv/x",
        file: "/srv/x/jfast.toml",
        data: { service: { name: "x" }, plugins: { enabled: ["database", "queue"] }, plugin: { queue } },
        env: {},
      }).queue!;
    expect(config({}).keepCompleted).toBe(true);
    expect(config({ keep_completed: false }).keepCompleted).toBe(false);
    expect(() => config({ keep_completed: "no" })).toThrow(/keep_completed/);
  });
});
