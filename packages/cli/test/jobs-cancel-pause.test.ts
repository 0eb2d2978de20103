import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast jobs cancel` and `jfast queue pause | resume` as separate processes against the Redis server on
// 127.0.0.1:6379, each test on a queue of its own. A missing server fails the test.
const REDIS_URL = "redis://127.0.0.1:6379";

function files(queue: string): Record<string, string> {
  return {
    "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n`,
    "modules/mail/tasks.ts": `
import { task } from "@jfast/runtime";
export const send = task("mail.send", async () => undefined);
`,
  };
}

async function dropQueue(queue: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`{${queue}}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function service() {
  const queue = `jfast-test.cli.${randomUUID().slice(0, 8)}`;
  const created = await createServiceRoot(files(queue));
  cleanups.push(created.remove, () => dropQueue(queue));
  return { queue, root: ["--root", created.root] };
}

describe("jfast jobs cancel and jfast queue pause | resume on the Redis queue", () => {
  it("cancels a scheduled job once, says why it cannot twice, and jobs show reads it cancelled", { timeout: 120_000 }, async () => {
    const { root } = await service();
    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", "--delay", "600", ...root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = enqueued.stdout.trim();

    const cancelled = await runJfast(["jobs", "cancel", id, ...root]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`cancelled ${id}\n`);

    const again = await runJfast(["jobs", "cancel", id, "no-such-job", ...root]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${id} was not cancelled (it is cancelled)`);
    expect(again.stderr).toContain("no job with id no-such-job");

    const shown = await runJfast(["jobs", "show", id, "--json", ...root]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ state: "cancelled" });
  });

  it("enqueues with --priority and jobs show prints it", { timeout: 120_000 }, async () => {
    const { root } = await service();
    const enqueued = await runJfast(["jobs", "enqueue", "mail.send", "--priority", "1", "--delay", "600", ...root]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = enqueued.stdout.trim();
    const shown = await runJfast(["jobs", "show", id, ...root]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("priority  1 (0 runs first, 9 last)");
    const json = await runJfast(["jobs", "show", id, "--json", ...root]);
    expect(JSON.parse(json.stdout)).toMatchObject({ job: { priority: 1 } });
    const refused = await runJfast(["jobs", "enqueue", "mail.send", "--priority", "12", ...root]);
    expect(refused.code).not.toBe(0);
  });

  it("pauses and resumes a declared task, refuses an unknown one, and --help names the docs page", { timeout: 120_000 }, async () => {
    const { queue, root } = await service();
    const paused = await runJfast(["queue", "pause", "mail.send", ...root]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^paused mail\.send \(since .+, by cli/);
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.hexists(`{${queue}}:paused`, "mail.send")).toBe(1);
      const resumed = await runJfast(["queue", "resume", "mail.send", ...root]);
      expect(resumed.stdout).toBe("resumed mail.send\n");
      expect(await redis.hexists(`{${queue}}:paused`, "mail.send")).toBe(0);
    } finally {
      redis.disconnect();
    }
    const idle = await runJfast(["queue", "resume", "mail.send", ...root]);
    expect(idle.stdout).toBe("mail.send was not paused; nothing changed\n");

    const unknown = await runJfast(["queue", "pause", "mail.nope", ...root]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no task named "mail.nope"');
    expect(unknown.stderr).toContain("mail.send");

    for (const command of [["queue", "pause"], ["queue", "resume"]]) {
      const help = await runJfast([...command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("jfast docs worker#pausing-a-task");
    }
    expect((await runJfast(["jobs", "cancel", "--help"])).stdout).toContain("jfast docs cli#jfast-jobs-cancel");
  });
});
