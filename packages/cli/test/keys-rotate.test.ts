import { randomBytes, randomUUID } from "node:crypto";
import { createJfast, Job, task, type DatabaseProvider, type Outbox } from "@jfast/runtime";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { AMQP_URL, PG_URL, REDIS_URL, dropRabbitQueue, redisServiceToml, sql } from "./services.js";

// `jfast keys rotate` as a separate process, on the real PostgreSQL (a schema of its own, for the outbox) with the
// Redis queue on 127.0.0.1:6379. A missing server fails the test.
const key = (kid: string) => `${kid}:${randomBytes(32).toString("base64")}`;

/** Every Redis key of the test's queue (its name is in each key's hash tag): deleted, or read as text. */
async function redisKeys<T>(queue: string, use: (redis: Redis, keys: string[]) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL);
  try {
    return await use(redis, await redis.keys(`*${queue}*`));
  } finally {
    redis.disconnect();
  }
}


const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast keys rotate", () => {
  it("re-encrypts waiting jobs and outbox rows with the first key, reports counts, and names what no key opens", { timeout: 120_000 }, async () => {
    const schema = `jfast_cli_keys_${randomBytes(4).toString("hex")}`;
    const queue = `jfast-test.cli-keys.${randomUUID().slice(0, 8)}`;
    cleanups.push(
      () => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
      () => redisKeys(queue, async (redis, keys) => keys.length && redis.del(...keys)),
    );
    const service = await createServiceRoot({
      "jfast.toml": redisServiceToml({ schema, queue }),
    });
    cleanups.push(service.remove);
    const old = key("old");
    const fresh = key("new");

    // Jobs as the service wrote them under the old key: one waiting in Redis, one row waiting for the relay.
    const charge = task<{ pan: string }>("svc.charge", { encrypt: true }, async () => undefined);
    const jfast = await createJfast({ root: service.root, tasks: [charge], env: { JFAST_ENCRYPTION_KEYS: old }, background: false });
    await jfast.start();
    try {
      await jfast.require("queue").enqueue(charge.job({ pan: "4242" }, { delayMs: 3_600_000 }));
      const database = jfast.require<DatabaseProvider>("database");
      await database.transaction((tx) => jfast.require<Outbox>("outbox").enqueue(tx, new Job({ task: "svc.charge", payload: { pan: "5555" } })));
    } finally {
      await jfast.stop();
    }
    const stored = async () => ({
      redis: await redisKeys(queue, async (redis, keys) => JSON.stringify(await Promise.all(keys.filter((k) => k.includes(":job:")).map((k) => redis.hgetall(k))))),
      outbox: JSON.stringify(await sql(`SELECT body::text FROM "${schema}".jfast_outbox`)),
    });
    const before = await stored();
    expect(before.redis).toContain('\\"kid\\":\\"old\\"');
    expect(before.outbox).toContain('\\"kid\\":\\"old\\"');

    const rotated = await runJfast(["keys", "rotate", "--root", service.root], { env: { JFAST_ENCRYPTION_KEYS: `${fresh},${old}` } });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toBe(`re-encrypting with key "new"\nqueue default (redis): 1 waiting, 0 dead letters rewritten\noutbox: 1 job rows rewritten\n`);
    const after = await stored();
    for (const text of [after.redis, after.outbox]) {
      expect(text).toContain('\\"kid\\":\\"new\\"');
      expect(text).not.toContain('\\"kid\\":\\"old\\"');
      expect(text).not.toMatch(/4242|5555/);
    }

    // Again: nothing left under an old key.
    const again = await runJfast(["keys", "rotate", "--json", "--root", service.root], { env: { JFAST_ENCRYPTION_KEYS: `${fresh},${old}` } });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ kid: "new", queues: [{ queue: "default", backend: "redis", waiting: 0, dead: 0, skipped: [] }], outbox: { rewritten: 0 } });

    // A list without the key that encrypted them: skipped, named on stderr, exit 1.
    const lost = await runJfast(["keys", "rotate", "--root", service.root], { env: { JFAST_ENCRYPTION_KEYS: key("other") } });
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/skipped .*key "new", which JFAST_ENCRYPTION_KEYS does not hold/);
  });

  it("on RabbitMQ says NOT_SUPPORTED for the messages waiting in the broker, and why", { timeout: 60_000 }, async () => {
    const queue = `jfast-test.cli-keys.${randomUUID().slice(0, 8)}`;
    cleanups.push(() => dropRabbitQueue(queue));
    const service = await createServiceRoot({
      "jfast.toml": [`[service]\nname = "svc"`, `[plugins]\nenabled = ["queue"]`, `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"`].join("\n"),
    });
    cleanups.push(service.remove);
    const rotated = await runJfast(["keys", "rotate", "--root", service.root], { env: { JFAST_ENCRYPTION_KEYS: key("k2") } });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toContain("queue default (rabbitmq): waiting jobs NOT_SUPPORTED, 0 dead letters rewritten\n");
    expect(rotated.stdout).toContain("NOT_SUPPORTED: RabbitMQ cannot rewrite a message waiting in the broker");
  });

  it("--help names the docs page", async () => {
    const help = await runJfast(["keys", "rotate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("jfast docs cli#jfast-keys-rotate");
  });
});
