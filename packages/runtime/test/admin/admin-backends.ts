import { AMQP_URL, dropQueue as dropRabbitQueue, uniqueQueue as uniqueRabbitQueue } from "../rabbitmq/rabbitmq-test-env.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { dropQueue as dropRedisQueue, REDIS_URL, uniqueQueue as uniqueRedisQueue } from "../redis/redis-test-env.js";
import { QUEUE_TUNING, type AdminBackendSetup } from "./admin-harness.js";

/** An admin app's service on each queue backend, its schema or queue named after `prefix` and dropped afterwards. */
export function adminBackendSetups(prefix: string): Record<"memory" | "postgres" | "redis" | "rabbitmq", () => Promise<AdminBackendSetup>> {
  return {
    memory: async () => ({ plugins: ["queue"], sections: `[plugin.queue]\nbackend = "memory"\n${QUEUE_TUNING}`, cleanup: async () => {} }),
    postgres: async () => {
      const schema = uniqueSchema(prefix);
      return {
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: () => dropSchema(schema),
      };
    },
    redis: async () => {
      const queue = uniqueRedisQueue(prefix);
      return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRedisQueue(queue) };
    },
    rabbitmq: async () => {
      const queue = uniqueRabbitQueue(prefix);
      return { plugins: ["queue"], sections: `[plugin.queue]\nbackend = "rabbitmq"\nurl = "${AMQP_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`, cleanup: () => dropRabbitQueue(queue) };
    },
  };
}
