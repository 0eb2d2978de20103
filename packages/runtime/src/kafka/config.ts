import { z } from "zod";
import { ConfigError } from "../errors/jfast-error.js";

const TOPIC_PREFIX = /^[a-zA-Z0-9._-]*$/;

/** `[plugin.kafka]` (docs/kafka.md#configuration). */
export const kafkaSchema = z.strictObject({
  bootstrap_servers: z.string().optional(),
  consumer_group: z.string().optional(),
  /** Put before every topic and the consumer group: several environments (or test runs) on one cluster. */
  topic_prefix: z.string().regex(TOPIC_PREFIX, 'letters, digits, ".", "_" and "-" only, e.g. "staging."').optional(),
  host_port: z.number().int().optional(),
  advertised_host: z.string().optional(),
  image: z.string().optional(),
});

export interface KafkaConfig {
  /** Bootstrap addresses: KAFKA_BROKERS, else bootstrap_servers, else localhost:<host_port>. */
  brokers: string[];
  /** Where `brokers` came from, so a connection error can say which setting to fix. */
  brokersFrom: "KAFKA_BROKERS" | "bootstrap_servers" | "default";
  /** The group `on` handlers consume in; one per service (default: the service name), after `topicPrefix`. */
  consumerGroup: string;
  /** Put before every topic this service publishes to or consumes, and before its group ("" for none). */
  topicPrefix: string;
  /** The port compose publishes for Kafka and the broker advertises to the host (default base_port + 2). */
  hostPort: number;
  advertisedHost: string;
  image: string;
}

/** A broker image that resolves today; `[plugin.kafka] image` moves it when registries move. */
export const DEFAULT_KAFKA_IMAGE = "apache/kafka:4.1.1";

const DOCS = "jfast docs kafka#configuration";

/** `[plugin.kafka]` with KAFKA_BROKERS and KAFKA_TOPIC_PREFIX over it. */
export function resolveKafka(
  section: z.output<typeof kafkaSchema> | undefined,
  at: { file: string; env: NodeJS.ProcessEnv; service: { name: string; basePort: number } },
): KafkaConfig {
  const kafka = section ?? {};
  const hostPort = kafka.host_port ?? at.service.basePort + 2;
  if (!Number.isInteger(hostPort) || hostPort < 1 || hostPort > 65535) {
    throw new ConfigError(`${at.file}: [plugin.kafka] host_port = ${hostPort} is not a port number`, {
      hint: "set host_port to a whole number between 1 and 65535 (default: [service] base_port + 2)",
      docs: DOCS,
    });
  }
  const fromEnv = at.env.KAFKA_BROKERS?.trim();
  const text = fromEnv || kafka.bootstrap_servers?.trim() || `localhost:${hostPort}`;
  const brokers = text.split(",").map((b) => b.trim()).filter(Boolean);
  const from = fromEnv ? "KAFKA_BROKERS" : kafka.bootstrap_servers?.trim() ? "bootstrap_servers" : "default";
  for (const broker of brokers) {
    if (!/^[^\s:/]+:\d{1,5}$/.test(broker)) {
      throw new ConfigError(`${from === "KAFKA_BROKERS" ? "KAFKA_BROKERS" : `${at.file}: [plugin.kafka] bootstrap_servers`}: "${broker}" is not host:port`, {
        hint: `list brokers as "host:port" separated by commas, e.g. "localhost:9092,kafka-2:9092"`,
        docs: DOCS,
      });
    }
  }
  const topicPrefix = at.env.KAFKA_TOPIC_PREFIX?.trim() || kafka.topic_prefix || "";
  if (!TOPIC_PREFIX.test(topicPrefix) || topicPrefix.length > 200) {
    throw new ConfigError(`KAFKA_TOPIC_PREFIX="${topicPrefix}" cannot start a Kafka topic name`, {
      hint: `use letters, digits, ".", "_" and "-" (at most 200), e.g. KAFKA_TOPIC_PREFIX=staging.`,
      docs: "jfast docs kafka#topic-prefix",
    });
  }
  return {
    brokers,
    brokersFrom: from,
    consumerGroup: topicPrefix + (kafka.consumer_group?.trim() || at.service.name),
    topicPrefix,
    hostPort,
    advertisedHost: kafka.advertised_host?.trim() || "localhost",
    image: kafka.image?.trim() || DEFAULT_KAFKA_IMAGE,
  };
}
