import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast } from "./jfast-process.js";

// Named queues from the command line (docs/queues.md): `jfast worker --queues`, `--queue` on the jobs and
// queue commands, the start-up error for an undeclared queue. Against the Redis server on 127.0.0.1:6379,
// each test on a queue name of its own. A missing server fails the test.
const REDIS_URL = "redis://127.0.0.1:6379";

function files(queue: string, mediaQueue = "media"): Record<string, string> {
  const task = (name: string, on: string) => `
export const ${name.split(".")[0]} = task("${name}", { queue: "${on}" }, async () => {
  await writeFile(new URL("../../ran-${name}", import.meta.url), "done");
});`;
  return {
    "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n[queues.email]\nconcurrency = 2\n[queues.media]\nconcurrency = 1\n`,
    "modules/mail/tasks.ts": `import { writeFile } from "node:fs/promises";\nimport { task } from "@jfast/runtime";\n${task("mail.send", "email")}\n`,
    "modules/media/tasks.ts": `import { writeFile } from "node:fs/promises";\nimport { task } from "@jfast/runtime";\n${task("media.resize", mediaQueue)}\n`,
  };
}

async function dropQueues(queue: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    for (const tag of [queue, `${queue}:email`, `${queue}:media`]) {
      const keys = await redis.keys(`{${tag}}*`);
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function service(mediaQueue?: string) {
  const queue = `jfast-test.cliq.${randomUUID().slice(0, 8)}`;
  const created = await createServiceRoot(files(queue, mediaQueue));
  cleanups.push(created.remove, () => dropQueues(queue));
  return { queue, dir: created.root, root: ["--root", created.root] };
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("named queues from the command line", () => {
  it("jfast worker --queues email runs the email queue's jobs only; the media job waits in its own queue", { timeout: 180_000 }, async () => {
    const { queue, dir, root } = await service();
    for (const task of ["mail.send", "media.resize"]) {
      const enqueued = await runJfast(["jobs", "enqueue", task, ...root]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
    }
    const redis = new Redis(REDIS_URL);
    try {
      // Each job went to its task's queue, under that queue's own hash tag.
      expect(await redis.llen(`{${queue}:email}:ready`)).toBe(1);
      expect(await redis.llen(`{${queue}:media}:ready`)).toBe(1);
      expect(await redis.llen(`{${queue}}:ready`)).toBe(0);

      const worker = startJfast(["worker", "--queues", "email", ...root], { timeoutMs: 120_000 });
      try {
        await worker.waitFor("worker started", 90_000);
        expect(worker.stderr).toMatch(/"queues":\["email"\]/);
        await until("the email job to run", () => existsSync(path.join(dir, "ran-mail.send")));
        await new Promise((r) => setTimeout(r, 1000));
        expect(existsSync(path.join(dir, "ran-media.resize"))).toBe(false);
        expect(await redis.llen(`{${queue}:media}:ready`)).toBe(1);
      } finally {
        worker.child.kill("SIGTERM");
      }
      expect((await worker.exited).code).toBe(0);
    } finally {
      redis.disconnect();
    }

    const unknown = await runJfast(["worker", "--queues", "email,nope", ...root]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no queue named "nope"');
    expect(unknown.stderr).toContain("[queues.nope]");
  });

  it("jfast queue pause --queue media pauses that queue's tasks only; --queue picks the queue of jobs dead", { timeout: 180_000 }, async () => {
    const { queue, root } = await service();
    const paused = await runJfast(["queue", "pause", "--queue", "media", ...root]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe("paused queue media: media.resize\n");
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.hexists(`{${queue}:media}:paused`, "media.resize")).toBe(1);
      expect(await redis.hexists(`{${queue}:email}:paused`, "mail.send")).toBe(0);
    } finally {
      redis.disconnect();
    }
    const resumed = await runJfast(["queue", "resume", "--queue", "media", ...root]);
    expect(resumed.stdout).toBe("resumed queue media: 1 of 1 tasks were paused\n");

    const dead = await runJfast(["jobs", "dead", "--queue", "email", "--json", ...root]);
    expect(dead.code, dead.stderr).toBe(0);
    expect(JSON.parse(dead.stdout)).toEqual([]);
    const wrong = await runJfast(["jobs", "dead", "--queue", "nope", ...root]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('no queue named "nope"');
  });

  it("refuses to start when a task names a queue jfast.toml does not declare, naming the section to add", { timeout: 120_000 }, async () => {
    const { root } = await service("meda");
    const result = await runJfast(["jobs", "dead", ...root]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('task "media.resize" runs on queue "meda"');
    expect(result.stderr).toContain("[queues.meda]");
  });
});
