import { REDIS_URL, dropQueue, uniqueQueue } from "../redis/redis-test-env.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

/** The Redis queue, on a queue name (hash tag) of its own. */
describeFuzz({
  name: "redis",
  ciRuns: 80,
  async setup() {
    const queue = uniqueQueue("fuzz");
    return {
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
      cleanup: () => dropQueue(queue),
    };
  },
});
