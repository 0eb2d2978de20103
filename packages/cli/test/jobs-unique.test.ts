import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast jobs enqueue` and `jfast jobs show` with a unique task, as separate processes against the Redis server
// on 127.0.0.1:6379, on a queue of its own. A missing server fails the test.
const REDIS_URL = "redis://127.0.0.1:6379";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("jfast jobs enqueue | show with a unique task", () => {
  it("says which job holds the key of a duplicate, and shows the key", { timeout: 120_000 }, async () => {
    const queue = `jfast-test.cli.${randomUUID().slice(0, 8)}`;
    const created = await createServiceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n`,
      "modules/report/tasks.ts": `
import { task } from "@jfast/runtime";
export const rebuild = task("report.rebuild", { unique: { key: (p: { report: string }) => "report:" + p.report } }, async () => undefined);
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
    const first = await runJfast(["jobs", "enqueue", "report.rebuild", "--payload", '{"report":"q3"}', ...root]);
    expect(first.code, first.stderr).toBe(0);
    const id = first.stdout.trim();

    const second = await runJfast(["jobs", "enqueue", "report.rebuild", "--payload", '{"report":"q3"}', "--json", ...root]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ duplicateOf: id, existed: false });

    const shown = await runJfast(["jobs", "show", id, ...root]);
    expect(shown.stdout).toContain('unique    report:q3 (held while ready, running)');
  });
});
