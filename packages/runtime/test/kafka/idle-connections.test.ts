import { createRequire } from "node:module";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKafkajs } from "../../src/kafka/kafkajs.js";
import { BROKER, requireBroker, sleep } from "./harness.js";

/**
 * An open connection to a broker costs nothing while nothing is asked of it: kafkajs' request queue re-armed a
 * 1 ms timer after every check of its (empty) queue, about a thousand checks a second per connection, which
 * jfast stops (src/kafka/kafkajs.ts). Requests still go out and come back, before and after an idle while.
 */
describe("kafka: an idle connection", () => {
  beforeAll(requireBroker);

  it("checks its empty request queue only when a request comes or goes, and still answers", async () => {
    const { Kafka, logLevel } = await loadKafkajs();
    const RequestQueue = createRequire(import.meta.url)("kafkajs/src/network/requestQueue/index.js") as { prototype: { checkPendingRequests(): void } };
    const check = RequestQueue.prototype.checkPendingRequests;
    let checks = 0;
    RequestQueue.prototype.checkPendingRequests = function (this: unknown) {
      checks++;
      return check.call(this);
    };
    const admin = new Kafka({ clientId: "idle-test", brokers: [BROKER], logLevel: logLevel.NOTHING }).admin();
    try {
      await admin.connect();
      expect(Array.isArray(await admin.listTopics())).toBe(true);
      await sleep(200);
      checks = 0;
      await sleep(1000);
      // Spinning, a connection checks about a thousand times a second; kafkajs' own timers never ask for more
      // than a few requests a second of an idle admin client.
      expect(checks).toBeLessThan(20);
      expect(Array.isArray(await admin.listTopics())).toBe(true);
    } finally {
      await admin.disconnect();
      RequestQueue.prototype.checkPendingRequests = check;
    }
  });
});
