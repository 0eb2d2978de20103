import type { PGlite } from "@electric-sql/pglite";
import { afterAll } from "vitest";
import { createMemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { createPostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { queueNames } from "../../src/backends/rabbitmq/names.js";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { migrate } from "../../src/database/migrate.js";
import { createPgliteDatabase, wrapPglite } from "../../src/database/pglite-database.js";
import { openTestBackend } from "../postgres/pg-test-env.js";
import amqp from "amqplib";
import { AMQP_URL, dropQueue as dropRabbitQueue, openBackend as openRabbit, uniqueQueue as rabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { dropQueue as dropRedisQueue, openBackend as openRedis, rawClient, uniqueQueue as redisQueue } from "../redis/redis-test-env.js";
import { describeEncryption, type EncryptionFactory } from "./encryption.js";

/** Encryption at rest on every backend, each read back raw with its own driver. */
const memory: EncryptionFactory = {
  name: "memory",
  async create() {
    const backend = createMemoryBackend();
    await backend.setup();
    // The memory queue's store is the process itself: its entries, as they are kept.
    const entries = (backend as unknown as { store: { entries: Map<string, unknown> } }).store.entries;
    return { backend, raw: async () => JSON.stringify([...entries.values()]), cleanup: () => backend.close() };
  },
};

const postgres: EncryptionFactory = {
  name: "postgres",
  async create() {
    const { backend, database, schema, cleanup } = await openTestBackend();
    const raw = async () => JSON.stringify(await database.sql.query(`SELECT row_to_json(j)::text AS row FROM "${schema}".jfast_jobs j`));
    return { backend, raw, cleanup };
  },
};

let pglite: Promise<PGlite> | null = null;
let schemas = 0;
afterAll(async () => (await pglite)?.close());

const embedded: EncryptionFactory = {
  name: "pglite",
  async create() {
    pglite ??= createPgliteDatabase({ dataDir: "memory://", schema: "public" }).then((db) => db.client);
    const client = await pglite;
    const schema = `jfast_encryption_${++schemas}`;
    await client.exec(`SET search_path TO ${schema}, public`);
    const db = wrapPglite(client);
    await migrate({ db, schema });
    const backend = createPostgresBackend({ db, schema, queue: "jfast.jobs" });
    await backend.setup();
    const raw = async () => JSON.stringify((await client.query(`SELECT row_to_json(j)::text AS row FROM ${schema}.jfast_jobs j`)).rows);
    return {
      backend,
      raw,
      async cleanup() {
        await backend.close();
        await client.exec(`DROP SCHEMA ${schema} CASCADE`);
      },
    };
  },
};

const redis: EncryptionFactory = {
  name: "redis",
  async create() {
    const queue = redisQueue("encryption");
    const backend = await openRedis(queue);
    /** Every key of the queue, whatever its type, as the server holds it. */
    const raw = async () => {
      const client = rawClient();
      try {
        const keys = await client.keys(queueKeys({ queue }).pattern);
        const values = await Promise.all(
          keys.map(async (key) => {
            const type = await client.type(key);
            if (type === "hash") return client.hgetall(key);
            if (type === "list") return client.lrange(key, 0, -1);
            if (type === "zset") return client.zrange(key, 0, -1);
            if (type === "set") return client.smembers(key);
            return client.get(key);
          }),
        );
        return JSON.stringify(values);
      } finally {
        client.disconnect();
      }
    };
    return {
      backend,
      raw,
      async cleanup() {
        await backend.close();
        await dropRedisQueue(queue);
      },
    };
  },
};

const rabbitmq: EncryptionFactory = {
  name: "rabbitmq",
  async create() {
    const queue = rabbitQueue("encryption");
    const backend = await openRabbit(queue);
    /**
     * Every message of the work queue, the delay levels and the dead letters: taken and published again as they
     * were (a message put back unacked would come back marked redelivered, which the backend counts as a lost
     * attempt).
     */
    const raw = async () => {
      const connection = await amqp.connect(AMQP_URL);
      try {
        const channel = await connection.createConfirmChannel();
        const names = queueNames(queue, 25);
        const seen: string[] = [];
        for (const name of [names.work, names.dead, ...Array.from({ length: 25 }, (_, level) => names.delayLevel(level))]) {
          const taken: amqp.GetMessage[] = [];
          for (let message = await channel.get(name, { noAck: true }); message !== false; message = await channel.get(name, { noAck: true })) taken.push(message);
          for (const message of taken) {
            seen.push(message.content.toString("utf8"), JSON.stringify(message.properties));
            const options = Object.fromEntries(Object.entries(message.properties).filter(([, value]) => value !== undefined));
            channel.sendToQueue(name, message.content, options);
          }
        }
        await channel.waitForConfirms();
        return JSON.stringify(seen);
      } finally {
        await connection.close();
      }
    };
    return {
      backend,
      raw,
      async cleanup() {
        await backend.close();
        await dropRabbitQueue(queue);
      },
    };
  },
};

describeEncryption(memory);
describeEncryption(postgres);
describeEncryption(embedded);
describeEncryption(redis);
describeEncryption(rabbitmq);
