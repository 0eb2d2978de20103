import { afterEach, describe, expect, it } from "vitest";
import { createTestService, type TestService } from "./support/test-service.js";
import { eventually } from "./support/processes.js";

let service: TestService | null = null;
afterEach(async () => {
  await service?.remove();
  service = null;
});

describe("jfast jobs dead / retry / discard against the same PostgreSQL as a worker", () => {
  it("lists dead letters newest death first, retries by id and --all, reports unknown ids with exit 1", async () => {
    service = await createTestService();
    const worker = await service.worker();
    // Three jobs that die on their only attempt, one after the other, so their times of death are ordered.
    const ids: string[] = [];
    for (const card of ["4000-0001", "4000-0002", "4000-0003"]) {
      const id = await service.enqueue("e2e.charge", ["--payload", JSON.stringify({ card }), "--max-attempts", "1"]);
      await eventually(async () => ((await service!.show(id)).state === "dead" ? true : undefined), { what: `job ${id} to die` });
      ids.push(id);
    }
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);

    const table = await service.jfast(["jobs", "dead"]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TASK\s+ATTEMPTS\s+DIED\s+ERROR$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([...ids].reverse());
    expect(lines[1]).toContain("e2e.charge");
    expect(lines[1]).toContain("1/1");
    expect(lines[1]).toMatch(/CardDeclined: card 4000-0003 declined$/);

    const json = await service.jfast(["jobs", "dead", "--json", "--limit", "2"]);
    const records = JSON.parse(json.stdout) as { job: { id: string; errors: { class: string; message: string; stack?: string }[] }; diedAt: string; lastError: { class: string } }[];
    expect(records.map((r) => r.job.id)).toEqual([ids[2], ids[1]]);
    expect(records[0]!.job.errors).toEqual([expect.objectContaining({ class: "CardDeclined", message: "card 4000-0003 declined", stack: expect.stringContaining("CardDeclined") })]);

    const partial = await service.jfast(["jobs", "retry", ids[0]!, "no-such-job"]);
    expect(partial.code).toBe(1);
    expect(partial.stdout).toContain(`retried ${ids[0]}`);
    expect(partial.stderr).toContain("no job with id no-such-job");
    const requeued = await service.show(ids[0]!);
    expect(requeued.state).toBe("ready");
    expect(requeued.job.attempts).toBe(0);

    const notDead = await service.jfast(["jobs", "retry", ids[0]!]);
    expect(notDead.code).toBe(1);
    expect(notDead.stderr).toContain(`${ids[0]} is not a dead letter (it is ready)`);

    const all = await service.jfast(["jobs", "retry", "--all"]);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split("\n").sort()).toEqual([`retried ${ids[1]}`, `retried ${ids[2]}`].sort());
    expect((await service.jfast(["jobs", "dead"])).stdout).toBe("no dead letters\n");

    const usage = await service.jfast(["jobs", "retry"]);
    expect(usage.code).toBe(2);
  });

  it("discards dead letters by id; --all needs --yes", async () => {
    service = await createTestService();
    const worker = await service.worker();
    const id = await service.enqueue("e2e.charge", ["--payload", '{"card":"x"}', "--max-attempts", "1"]);
    await eventually(async () => ((await service!.show(id)).state === "dead" ? true : undefined), { what: "the job to die" });
    worker.child.kill("SIGTERM");
    await worker.exited;
    expect((await service.jfast(["jobs", "discard", "--all"])).code).toBe(2);
    const discarded = await service.jfast(["jobs", "discard", id]);
    expect(discarded.code).toBe(0);
    expect(discarded.stdout).toContain(`discarded ${id}`);
    const gone = await service.jfast(["jobs", "show", id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no job with id ${id}`);
  });

  it("refuses to enqueue a task the service does not declare", async () => {
    service = await createTestService();
    const result = await service.jfast(["jobs", "enqueue", "e2e.nope"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('this service declares no task named "e2e.nope"');
    expect(result.stderr).toContain("e2e.charge");
  });
});
