import { dropQueue, REDIS_URL, uniqueQueue } from "../redis/redis-test-env.js";
import { QUEUE_TUNING } from "./admin-harness.js";
import { describeAdminRouter } from "./admin-router.js";

/** The real Redis, a queue (key prefix) of its own per test; no database, so the audit trail is in memory and the logs. */
describeAdminRouter(
  "redis",
  async () => {
    const queue = uniqueQueue("admin");
    return {
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
      cleanup: () => dropQueue(queue),
    };
  },
  "memory",
);
