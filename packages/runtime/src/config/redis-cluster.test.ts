import { describe, expect, it } from "vitest";
import { resolveConfig } from "./load-config.js";

function resolve(queue: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const data = { service: { name: "billing" }, plugins: { enabled: ["queue"] }, plugin: { queue } };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env });
}

describe("[plugin.queue] cluster and wait_replicas", () => {
  it("are off by default", () => {
    const { queue } = resolve({ backend: "redis", url: "redis://127.0.0.1:6379" });
    expect(queue).toMatchObject({ cluster: false, waitReplicas: 0, waitTimeoutMs: 1000 });
  });

  it("read the seed list, the replica count and the timeout", () => {
    const { queue } = resolve({ backend: "redis", cluster: true, url: "redis://a:7001,redis://b:7002", wait_replicas: 1, wait_timeout: 0.5 });
    expect(queue).toMatchObject({ url: "redis://a:7001,redis://b:7002", cluster: true, waitReplicas: 1, waitTimeoutMs: 500 });
  });

  it("take REDIS_URL as the seed list", () => {
    const { queue } = resolve({ backend: "redis", cluster: true, url: "redis://a:7001" }, { REDIS_URL: "redis://c:7003,d:7004" });
    expect(queue?.url).toBe("redis://c:7003,d:7004");
  });

  it("stop start-up on another backend, naming the key", () => {
    expect(() => resolve({ backend: "rabbitmq", url: "amqp://x", cluster: true })).toThrow(/\[plugin.queue\] cluster applies to the Redis queue only/);
    expect(() => resolve({ backend: "rabbitmq", url: "amqp://x", wait_replicas: 1 })).toThrow(/wait_replicas applies to the Redis queue only/);
  });
});
