import { afterEach, describe, expect, it } from "vitest";
import { Job, type JobJSON } from "../../src/core/job.js";
import { jobsToColumns, rowToJson, type JobRow } from "../../src/backends/postgres/job-rows.js";
import { openTestBackend } from "./pg-test-env.js";

/**
 * An enqueue sends a column that is the same for every row as NULL instead of an array (jobsToColumns,
 * enqueue.sql): all null, all zero attempts, every createdAt equal to availableAt, one task for all. Whatever
 * mix a batch has, every stored row must read back as the job that was enqueued.
 */
describe("postgres: the enqueue's columns", () => {
  let env: Awaited<ReturnType<typeof openTestBackend>> | null = null;
  afterEach(async () => {
    await env?.cleanup();
    env = null;
  });

  const stored = async (): Promise<JobJSON[]> =>
    (await env!.database.sql.query<JobRow>("SELECT * FROM jfast_jobs ORDER BY seq")).map(rowToJson);

  /** Jobs in which each column that can be left out is set on one job only, the others keeping the usual value. */
  function mixedBatch(): Job[] {
    const plain = () => new Job({ task: "mix.plain", payload: { n: 1 } });
    const retried = plain();
    retried.attempts = 2;
    retried.errors = [{ attempt: 2, at: new Date().toISOString(), class: "Error", message: 'a "quoted" \\ failure' }];
    return [
      plain(),
      new Job({ task: "mix.other", payload: [1, 2] }),
      new Job({ task: "mix.plain", maxAttempts: 7 }),
      new Job({ task: "mix.plain", delayMs: 60_000 }),
      new Job({ task: "mix.plain", tenantId: "acme" }),
      new Job({ task: "mix.plain", requestId: "req-1" }),
      new Job({ task: "mix.plain", trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }),
      new Job({ task: "mix.plain", timeoutMs: 1234 }),
      new Job({ task: "mix.plain", priority: 0 }),
      retried,
      plain(),
    ];
  }

  it("sends the columns every row shares as NULL, and the shared task once", () => {
    const jobs = Array.from({ length: 3 }, () => new Job({ task: "same.task", payload: { a: 1 } }));
    for (const job of jobs) job.maxAttempts = 5;
    const [ids, tasks, payloads, attempts, maxAttempts, availableAt, createdAt, tenants, requests, traces, errors, timeouts, oneTask, oneMax, priorities] =
      jobsToColumns(jobs);
    expect([ids, payloads, availableAt].every((c) => typeof c === "string" && c.startsWith("{"))).toBe(true);
    expect([tasks, attempts, maxAttempts, createdAt, tenants, requests, traces, errors, timeouts, priorities]).toEqual(Array(10).fill(null));
    expect([oneTask, oneMax]).toEqual(["same.task", "5"]);
    // One job that differs is enough to send the column.
    const mixed = jobsToColumns(mixedBatch());
    expect(mixed.slice(0, 12).every((c) => typeof c === "string")).toBe(true);
    expect(mixed.slice(12, 14)).toEqual([null, null]);
    expect(mixed[14]).toBe("{5,5,5,5,5,5,5,5,0,5,5}");
  });

  it("stores a batch of new jobs whose columns are all shared exactly as enqueued", async () => {
    env = await openTestBackend();
    const jobs = Array.from({ length: 5 }, (_, i) => new Job({ task: "same.task", payload: { i }, maxAttempts: 4 }));
    await env.backend.enqueue({ jobs });
    const rows = await stored();
    expect(rows).toEqual(jobs.map((j) => j.toJSON()));
    expect(rows.every((r) => r.attempts === 0 && r.createdAt === r.availableAt && r.task === "same.task" && r.maxAttempts === 4)).toBe(true);
  });

  it("stores a mixed batch exactly as enqueued, new jobs or ids passed in", async () => {
    env = await openTestBackend();
    const fresh = mixedBatch();
    await env.backend.enqueue({ jobs: fresh });
    expect(await stored()).toEqual(fresh.map((j) => j.toJSON()));
    // Ids passed in go the checking way (ON CONFLICT): the same statement with the same columns.
    const passed = mixedBatch().map((j) => Job.fromJSON({ ...j.toJSON(), id: `passed-${j.id}` }));
    await env.backend.enqueue({ jobs: passed });
    expect((await stored()).slice(fresh.length)).toEqual(passed.map((j) => j.toJSON()));
  });

  it("stores a pipelined batch whose slices differ in what they share exactly as enqueued", async () => {
    env = await openTestBackend();
    // 2 500 jobs in slices of 1 000: the first slice shares every column, the second has a tenant on one job,
    // the third another task on one job.
    const jobs = Array.from({ length: 2500 }, (_, i) =>
      i === 1500 ? new Job({ task: "slice.task", tenantId: "acme" }) : new Job({ task: i === 2400 ? "slice.other" : "slice.task" }),
    );
    await env.backend.enqueue({ jobs });
    expect(await stored()).toEqual(jobs.map((j) => j.toJSON()));
  });
});
