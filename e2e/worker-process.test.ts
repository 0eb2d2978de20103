import { afterEach, describe, expect, it } from "vitest";
import { createTestService, type TestService } from "./support/test-service.js";
import { eventually } from "./support/processes.js";

// A real `jfast worker` process on the real PostgreSQL, in a schema of its own. Jobs go in through
// `jfast jobs enqueue`, come out through `jfast jobs show`; the tasks log what each attempt saw.

let service: TestService | null = null;
afterEach(async () => {
  await service?.remove();
  service = null;
});

async function started(svc: TestService, id: string, attempt?: number) {
  return eventually(
    async () => (await svc.events()).find((e) => e.id === id && e.event === "start" && (attempt === undefined || e.attempt === attempt)),
    { what: `job ${id} to start${attempt ? ` attempt ${attempt}` : ""}`, timeoutMs: 60_000 },
  );
}

describe("jfast worker on PostgreSQL, as a process", () => {
  it("SIGTERM: the short job finishes, the long one goes back with its attempt returned, exit 0 within the grace", async () => {
    service = await createTestService();
    const worker = await service.worker(["--concurrency", "2", "--grace", "8"]);
    const long = await service.enqueue("e2e.long");
    const short = await service.enqueue("e2e.short", ["--payload", '{"ms":3000}', "--tenant", "acme"]);
    await started(service, long);
    const shortStart = await started(service, short);
    expect(shortStart.tenant).toBe("acme");

    const signalled = Date.now();
    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    const took = Date.now() - signalled;
    expect(exit.code).toBe(0);
    expect(took).toBeLessThan(8_000 + 5_000);

    const events = await service.events();
    expect(events.filter((e) => e.id === short && e.event === "done")).toHaveLength(1);
    expect(events.filter((e) => e.id === long && e.event === "done")).toHaveLength(0);
    expect((await service.show(short)).state).toBe("completed");
    const longInfo = await service.show(long);
    expect(longInfo.state).toBe("ready");
    expect(longInfo.job.attempts).toBe(0);
  });

  it("a second SIGTERM stops waiting at once and still releases the running job", async () => {
    service = await createTestService();
    const worker = await service.worker(["--grace", "300"]);
    const long = await service.enqueue("e2e.long");
    await started(service, long);
    worker.child.kill("SIGTERM");
    await worker.waitFor("SIGTERM: shutting down");
    const second = Date.now();
    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - second).toBeLessThan(15_000);
    const info = await service.show(long);
    expect(info.state).toBe("ready");
    expect(info.job.attempts).toBe(0);
  });

  it("kill -9 mid-job: the job runs again after its lease expires, and the lost attempt is recorded", async () => {
    service = await createTestService({ visibilityTimeout: 2 });
    const first = await service.worker();
    const job = await service.enqueue("e2e.short", ["--payload", '{"ms":6000}']);
    await started(service, job, 1);
    first.child.kill("SIGKILL");
    await first.exited;

    const second = await service.worker();
    await started(service, job, 2);
    const done = await eventually(async () => (await service!.events()).find((e) => e.id === job && e.event === "done"), {
      what: "the job to finish on the second worker",
    });
    expect(done.pid).toBe(second.child.pid);
    const info = await eventually(async () => {
      const i = await service!.show(job);
      return i.state === "completed" ? i : undefined;
    }, { what: "the job to be completed" });
    expect(info.job.attempts).toBe(2);
    expect(info.job.errors).toEqual([expect.objectContaining({ reason: "worker lost" })]);
    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  });

  it("a poison pill under a supervisor that restarts the worker ends dead with \"worker lost\" after max_attempts", async () => {
    service = await createTestService({ visibilityTimeout: 2, maxAttempts: 3 });
    const pill = await service.enqueue("e2e.pill");
    let restarts = 0;
    let state = "";
    // The supervisor: whenever the worker dies, start another, as an orchestrator would. Bounded, so a
    // pill that looped forever fails the test instead of hanging it.
    while (restarts < 8) {
      const worker = await service.worker();
      const outcome = await Promise.race([
        worker.exited.then(() => "exited" as const),
        eventually(async () => ((await service!.show(pill)).state === "dead" ? true : undefined), { what: "dead", timeoutMs: 60_000 }).then(() => "dead" as const),
      ]);
      if (outcome === "dead") {
        state = "dead";
        worker.child.kill("SIGTERM");
        expect((await worker.exited).code).toBe(0);
        break;
      }
      restarts++;
    }
    expect(state).toBe("dead");
    const starts = (await service.events()).filter((e) => e.id === pill && e.event === "start");
    expect(starts.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(restarts).toBe(3);
    const dead = await service.jfast(["jobs", "dead", "--json"]);
    const [record] = JSON.parse(dead.stdout) as { job: { id: string; attempts: number }; lastError: { reason: string } }[];
    expect(record!.job.id).toBe(pill);
    expect(record!.job.attempts).toBe(3);
    expect(record!.lastError.reason).toBe("worker lost");
  });
});
