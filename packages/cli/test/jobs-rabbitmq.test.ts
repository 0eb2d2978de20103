import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast, type JfastProcess } from "./jfast-process.js";
import { AMQP_URL, dropRabbitQueue } from "./services.js";

// `jfast worker` and `jfast jobs dead | retry | discard` as separate processes against the RabbitMQ broker on
// 127.0.0.1:5672, each test on a queue of its own. A missing broker fails the test.

function files(queue: string): Record<string, string> {
  return {
    "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n`,
    "modules/dl/tasks.ts": `
import { task } from "@jfast/runtime";
export const fails = task("dl.fails", { maxAttempts: 1 }, async (payload: { n: number }) => {
  throw new Error("card declined " + payload.n);
});
`,
  };
}

async function brokerCounts(queue: string): Promise<{ work: number; dead: number }> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    return { work: (await channel.checkQueue(queue)).messageCount, dead: (await channel.checkQueue(`${queue}.dead`)).messageCount };
  } finally {
    await connection.close();
  }
}

let processes: JfastProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const p of processes) p.child.kill("SIGKILL");
  processes = [];
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("jfast jobs on the RabbitMQ queue", () => {
  it("lists dead letters newest first, retries by id and --all, and discards", { timeout: 120_000 }, async () => {
    const queue = `jfast-test.cli.${randomUUID().slice(0, 8)}`;
    const service = await createServiceRoot(files(queue));
    cleanups.push(service.remove, () => dropRabbitQueue(queue));
    const root = ["--root", service.root];

    for (const [id, n] of [["job-a", 1], ["job-b", 2]] as const) {
      const enqueued = await runJfast(["jobs", "enqueue", "dl.fails", "--id", id, "--payload", JSON.stringify({ n }), ...root]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      // Distinct times of death, in this order.
      const worker = startJfast(["worker", ...root]);
      processes.push(worker);
      await worker.waitFor(`"job_id":"${id}"`, 60_000);
      worker.child.kill("SIGTERM");
      expect((await worker.exited).code).toBe(0);
    }

    const dead = await runJfast(["jobs", "dead", "--json", ...root]);
    expect(dead.code, dead.stderr).toBe(0);
    const list = JSON.parse(dead.stdout) as Array<{ job: { id: string; attempts: number }; lastError: { class: string; message: string } }>;
    expect(list.map((d) => d.job.id)).toEqual(["job-b", "job-a"]);
    expect(list[0]!.lastError).toMatchObject({ class: "Error", message: "card declined 2" });
    expect(list[0]!.job.attempts).toBe(1);
    const human = await runJfast(["jobs", "dead", ...root]);
    expect(human.stdout).toMatch(/job-b\s+dl\.fails\s+1\/1/);

    const retried = await runJfast(["jobs", "retry", "job-a", ...root]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain("retried job-a");
    expect(await brokerCounts(queue)).toEqual({ work: 1, dead: 1 });

    // An id that is no dead letter: reported, exit 1.
    const missing = await runJfast(["jobs", "retry", "no-such-job", ...root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no-such-job");

    const all = await runJfast(["jobs", "retry", "--all", ...root]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain("job-b");
    expect(await brokerCounts(queue)).toEqual({ work: 2, dead: 0 });

    // Both die again under a worker; discard removes them for good.
    const worker = startJfast(["worker", ...root]);
    processes.push(worker);
    await worker.waitFor(/"job_id":"job-a"[\s\S]*"job_id":"job-b"|"job_id":"job-b"[\s\S]*"job_id":"job-a"/, 60_000);
    worker.child.kill("SIGTERM");
    await worker.exited;
    const discarded = await runJfast(["jobs", "discard", "--all", "--yes", ...root]);
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(await brokerCounts(queue)).toEqual({ work: 0, dead: 0 });
  });
});
