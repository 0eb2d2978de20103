import { describe, expect, it } from "vitest";
import { rabbitMqQueue } from "./config.js";

describe("the RabbitMQ queue's options", () => {
  it("set the AMQP heartbeat to twice the visibility timeout, between 5 and 60 s", () => {
    const config = rabbitMqQueue.resolve({ backend: "rabbitmq", queue_type: "quorum" }, { file: "jfast.toml", env: { AMQP_URL: "amqp://a" } });
    const heartbeat = (visibilityTimeoutMs: number) => rabbitMqQueue.toOptions(config, { backendName: "jobs", visibilityTimeoutMs }).heartbeatSeconds;
    expect(rabbitMqQueue.toOptions(config, { backendName: "jobs", visibilityTimeoutMs: 20_000 })).toEqual({ url: "amqp://a", queue: "jobs", queueType: "quorum", heartbeatSeconds: 40 });
    expect([heartbeat(1_000), heartbeat(60_000), heartbeat(2_500)]).toEqual([5, 60, 5]);
  });
});
