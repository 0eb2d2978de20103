import { AMQP_URL, dropQueue, uniqueQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { describeFuzz } from "./describe-fuzz.js";
import { QUEUE_TUNING } from "./fuzz-app.js";

/** The RabbitMQ queue, on a queue name (and delay cascade) of its own. */
describeFuzz({
  name: "rabbitmq",
  ciRuns: 70,
  async setup() {
    const queue = uniqueQueue("fuzz");
    return {
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
      cleanup: () => dropQueue(queue),
    };
  },
});
