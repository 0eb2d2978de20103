import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast } from "./jfast-process.js";

// `jfast jobs show` of a completed job prints its result (docs/tasks.md#results): a job enqueued by one process,
// run by a `jfast worker` process, shown by a third, on a queue of its own on the Redis server at 127.0.0.1:6379.
const REDIS_URL = "redis://127.0.0.1:6379";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("jfast jobs show with a result", () => {
  it("prints a completed job's result, in --json as `result`, and why a result too large was not stored", { timeout: 180_000 }, async () => {
    const queue = `jfast-test.cli.${randomUUID().slice(0, 8)}`;
    const created = await createServiceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\nmax_result_bytes = 200\n`,
      "modules/billing/tasks.ts": `
import { task } from "@jfast/runtime";
export const quote = task("billing.quote", async (payload: { lines: number }) => {
  process.stdout.write("quoted " + payload.lines + "\\n");
  return payload.lines > 100 ? { text: "x".repeat(300) } : { total: 12.5, lines: payload.lines };
});
`,
    });
    cleanups.push(created.remove, async () => {
      const redis = new Redis(REDIS_URL);
      try {
        const keys = await redis.keys(`{${queue}}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    });
    const root = ["--root", created.root];
    const ids: string[] = [];
    for (const lines of [2, 200]) {
      const enqueued = await runJfast(["jobs", "enqueue", "billing.quote", "--payload", JSON.stringify({ lines }), ...root]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      ids.push(enqueued.stdout.trim());
    }
    const worker = startJfast(["worker", ...root], { timeoutMs: 120_000 });
    try {
      await worker.waitFor("quoted 2", 90_000);
      await worker.waitFor("quoted 200", 30_000);
    } finally {
      // Shutdown writes every outcome not yet written before it exits.
      worker.child.kill("SIGTERM");
    }
    expect((await worker.exited).code).toBe(0);

    const json = await runJfast(["jobs", "show", ids[0]!, "--json", ...root]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: "completed", result: { total: 12.5, lines: 2 } });
    const human = await runJfast(["jobs", "show", ids[0]!, ...root]);
    expect(human.stdout).toContain('result    {"total":12.5,"lines":2}');

    const large = await runJfast(["jobs", "show", ids[1]!, "--json", ...root]);
    const shown = JSON.parse(large.stdout) as { state: string; result?: unknown; resultOmitted?: string };
    expect(shown.state).toBe("completed");
    expect(shown.result).toBeUndefined();
    expect(shown.resultOmitted).toMatch(/more than \[plugin\.queue\] max_result_bytes \(200\)/);
  });
});
