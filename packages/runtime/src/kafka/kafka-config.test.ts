import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config/load-config.js";
import { DEFAULT_KAFKA_IMAGE } from "./config.js";
import { ConfigError } from "../errors/jfast-error.js";

function resolve(section: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = {}, basePort = 8100) {
  const data = {
    service: { name: "billing", base_port: basePort },
    plugins: { enabled: ["kafka"] },
    ...(section ? { plugin: { kafka: section } } : {}),
  };
  return resolveConfig({ root: "/srv/billing", file: "/srv/billing/jfast.toml", data, env }).kafka!;
}

describe("[plugin.kafka]", () => {
  it("defaults to the broker that `jfast deploy compose` publishes: localhost:<base_port + 2>", () => {
    expect(resolve(undefined)).toEqual({
      brokers: ["localhost:8102"],
      brokersFrom: "default",
      consumerGroup: "billing",
      topicPrefix: "",
      hostPort: 8102,
      advertisedHost: "localhost",
      image: DEFAULT_KAFKA_IMAGE,
    });
  });

  it("moves the default bootstrap address with host_port", () => {
    expect(resolve({ host_port: 19092 })).toMatchObject({ brokers: ["localhost:19092"], hostPort: 19092 });
  });

  it("reads bootstrap_servers as a comma-separated list, and KAFKA_BROKERS over it", () => {
    expect(resolve({ bootstrap_servers: "k1:9092, k2:9092" })).toMatchObject({ brokers: ["k1:9092", "k2:9092"], brokersFrom: "bootstrap_servers" });
    expect(resolve({ bootstrap_servers: "k1:9092" }, { KAFKA_BROKERS: "10.0.0.5:9094" })).toMatchObject({
      brokers: ["10.0.0.5:9094"],
      brokersFrom: "KAFKA_BROKERS",
    });
  });

  it("takes consumer_group, advertised_host and image as written", () => {
    expect(resolve({ consumer_group: "billing-v2", advertised_host: "kafka.local", image: "bitnamilegacy/kafka:3.9" })).toMatchObject({
      consumerGroup: "billing-v2",
      advertisedHost: "kafka.local",
      image: "bitnamilegacy/kafka:3.9",
    });
  });

  it("puts topic_prefix (KAFKA_TOPIC_PREFIX over it) before the consumer group", () => {
    expect(resolve({ topic_prefix: "staging." })).toMatchObject({ topicPrefix: "staging.", consumerGroup: "staging.billing" });
    expect(resolve({ topic_prefix: "staging.", consumer_group: "billing-v2" }, { KAFKA_TOPIC_PREFIX: "pr-42." })).toMatchObject({
      topicPrefix: "pr-42.",
      consumerGroup: "pr-42.billing-v2",
    });
    expect(() => resolve({}, { KAFKA_TOPIC_PREFIX: "a b" })).toThrow(/KAFKA_TOPIC_PREFIX="a b" cannot start a Kafka topic name/);
    expect(() => resolve({ topic_prefix: "a/b" })).toThrow(/\[plugin.kafka\] topic_prefix/);
  });

  it("rejects an address that is not host:port, naming where it came from", () => {
    expect(() => resolve({}, { KAFKA_BROKERS: "kafka://broker" })).toThrow(/KAFKA_BROKERS: "kafka:\/\/broker" is not host:port/);
    expect(() => resolve({ bootstrap_servers: "broker" })).toThrow(ConfigError);
    expect(() => resolve({ host_port: 70000 })).toThrow(/host_port = 70000 is not a port number/);
  });

  it("rejects unknown keys in the section", () => {
    expect(() => resolve({ bootstrap_server: "k:1" })).toThrow(/unknown key bootstrap_server/);
  });

  it("is null when the kafka plugin is off", () => {
    const config = resolveConfig({ root: "/r", file: "/r/jfast.toml", data: { service: { name: "billing" } }, env: { KAFKA_BROKERS: "k:1" } });
    expect(config.kafka).toBeNull();
  });
});

describe("the plugin's old name, events", () => {
  const renamed = (data: Record<string, unknown>) => () => resolveConfig({ root: "/r", file: "/r/jfast.toml", data: { service: { name: "billing" }, ...data }, env: {} });
  const refusal = (found: string) =>
    expect.objectContaining({
      code: "CONFIG_PLUGIN_RENAMED",
      message: expect.stringContaining(`/r/jfast.toml: the "events" plugin is now called "kafka" (found ${found})\n`),
      hint: 'rename "events" to "kafka" in [plugins] enabled and [plugin.events] to [plugin.kafka]',
      docs: "jfast docs kafka#renamed-from-events",
    });

  it("in [plugins] enabled stops start-up naming the new one", () => {
    expect(renamed({ plugins: { enabled: ["queue", "events"] } })).toThrow(refusal('"events" in [plugins] enabled'));
  });

  it("as a [plugin.events] section stops start-up naming the new one", () => {
    expect(renamed({ plugins: { enabled: ["kafka"] }, plugin: { events: { bootstrap_servers: "k:1" } } })).toThrow(refusal("[plugin.events]"));
    expect(renamed({ plugins: { enabled: ["events"] }, plugin: { events: {} } })).toThrow(refusal('"events" in [plugins] enabled and [plugin.events]'));
  });
});
