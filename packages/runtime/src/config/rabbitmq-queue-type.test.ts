import { describe, expect, it } from "vitest";
import { resolveConfig } from "./load-config.js";

function resolve(queue: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const data = { service: { name: "billing" }, plugins: { enabled: ["queue"] }, plugin: { queue } };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env });
}

describe("[plugin.queue] queue_type", () => {
  it("is classic by default", () => {
    expect(resolve({ backend: "rabbitmq", url: "amqp://a:5672" }).queue?.queueType).toBe("classic");
  });

  it("reads quorum and keeps a cluster's URL list as it is (AMQP_URL wins)", () => {
    const { queue } = resolve({ backend: "rabbitmq", queue_type: "quorum", url: "amqp://a:5672,amqp://b:5672" });
    expect(queue).toMatchObject({ queueType: "quorum", url: "amqp://a:5672,amqp://b:5672" });
    expect(resolve({ backend: "rabbitmq", url: "amqp://a:5672" }, { AMQP_URL: "amqp://c:5672,amqp://d:5672" }).queue?.url).toBe("amqp://c:5672,amqp://d:5672");
  });

  it("refuses another type and stops start-up on another backend, naming the key", () => {
    expect(() => resolve({ backend: "rabbitmq", url: "amqp://a", queue_type: "stream" })).toThrow();
    expect(() => resolve({ backend: "redis", url: "redis://a", queue_type: "quorum" })).toThrow(/\[plugin.queue\] queue_type applies to the RabbitMQ queue only/);
  });
});
