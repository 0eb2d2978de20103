import type { DatabaseProvider } from "../../src/database/database-provider.js";
import type { Outbox } from "../../src/outbox/outbox.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { REDIS_URL, dropQueue, uniqueQueue } from "../redis/redis-test-env.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

/**
 * Jobs written inside the caller's transaction (jfast_outbox in PostgreSQL) and moved by the relay to the Redis
 * queue: the payload goes through one more store and one more hop before its handler.
 */
describeFuzz({
  name: "outbox relay (PostgreSQL to Redis)",
  ciRuns: 60,
  async setup() {
    const schema = uniqueSchema("fuzzob");
    const queue = uniqueQueue("fuzz-outbox");
    return {
      plugins: ["database", "queue", "outbox"],
      sections:
        `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n` +
        `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}\n` +
        `[plugin.outbox]\nmax_attempts = 3\nbackoff_base = 0.05\npoll_interval = 0.2\n`,
      async cleanup() {
        await dropQueue(queue);
        await dropSchema(schema);
      },
    };
  },
  async enqueue(app, jobs) {
    const database = app.jfast.require<DatabaseProvider>("database");
    const outbox = app.jfast.require<Outbox>("outbox");
    await database.transaction((tx) => outbox.enqueue(tx, jobs));
  },
});
