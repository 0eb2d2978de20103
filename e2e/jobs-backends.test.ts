import { afterEach, describe, expect, it } from "vitest";
import { createTestService, type Backend, type TestService } from "./support/test-service.js";
import { eventually } from "./support/processes.js";

// `jfast jobs dead` and `jfast jobs retry` are the same commands on every backend: PostgreSQL is covered in
// jobs-cli.test.ts, Redis and RabbitMQ here, each against its real server in a namespace of its own.

let service: TestService | null = null;
afterEach(async () => {
  await service?.remove();
  service = null;
});

describe.each<Backend>(["redis", "rabbitmq"])("jfast jobs dead / retry on %s", (backend) => {
  it("lists dead letters newest first with their errors, retries by id and --all, reports unknown ids", async () => {
    service = await createTestService({ backend });
    const worker = await service.worker();
    const ids: string[] = [];
    for (const card of ["4000-0001", "4000-0002"]) {
      const id = await service.enqueue("e2e.charge", ["--payload", JSON.stringify({ card }), "--max-attempts", "1"]);
      await eventually(async () => ((await service!.dead()).some((d) => d.job.id === id) ? true : undefined), { what: `job ${id} to die` });
      ids.push(id);
    }
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);

    const dead = await service.dead();
    expect(dead.map((d) => d.job.id)).toEqual([ids[1], ids[0]]);
    expect(dead[0]!.lastError).toMatchObject({ class: "CardDeclined", message: "card 4000-0002 declined" });
    expect(dead[0]!.job.errors).toHaveLength(1);

    const table = await service.jfast(["jobs", "dead"]);
    expect(table.stdout.trim().split("\n").slice(1).map((l) => l.split(/\s+/)[0])).toEqual([ids[1], ids[0]]);

    const partial = await service.jfast(["jobs", "retry", ids[0]!, "no-such-job"]);
    expect(partial.code).toBe(1);
    expect(partial.stdout).toContain(`retried ${ids[0]}`);
    expect(partial.stderr).toContain("no-such-job");

    const all = await service.jfast(["jobs", "retry", "--all"]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`retried ${ids[1]}`);
    expect(await service.dead()).toEqual([]);

    // The retried jobs run again (and die again: the card is still declined), attempts counted from zero.
    const again = await service.worker();
    const redead = await eventually(async () => {
      const d = await service!.dead();
      return d.length === 2 ? d : undefined;
    }, { what: "both retried jobs to run and die again" });
    for (const d of redead) {
      expect(d.job.attempts).toBe(1);
      expect(d.job.errors).toHaveLength(2);
    }
    again.child.kill("SIGTERM");
    expect((await again.exited).code).toBe(0);
  });
});
