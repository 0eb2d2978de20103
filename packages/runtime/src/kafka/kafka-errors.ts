import { BackendError, ConfigError, JfastError } from "../errors/jfast-error.js";

/**
 * kafkajs errors translated at the plugin's boundary. Callers branch on our codes; the driver error stays
 * the `cause`. A broker that cannot be reached is the common case, so its message names the addresses
 * tried, where they came from, and how to get a broker.
 */
export const KafkaErrorCode = {
  unavailable: "KAFKA_UNAVAILABLE",
  publishFailed: "KAFKA_PUBLISH_FAILED",
  topicMissing: "KAFKA_TOPIC_MISSING",
  eventKeyMissing: "EVENT_KEY_MISSING",
} as const;

const DOCS = "jfast docs kafka";

export interface BrokerSource {
  brokers: readonly string[];
  /** Where the addresses came from, as the user would look for them. */
  from: "KAFKA_BROKERS" | "bootstrap_servers" | "default";
}

export function describeSource(source: BrokerSource): string {
  switch (source.from) {
    case "KAFKA_BROKERS":
      return "the KAFKA_BROKERS environment variable";
    case "bootstrap_servers":
      return "[plugin.kafka] bootstrap_servers";
    default:
      return "the default (localhost:<[plugin.kafka] host_port>, what `jfast deploy compose` publishes)";
  }
}

export function kafkaUnavailable(source: BrokerSource, doing: string, cause: unknown): BackendError {
  return new BackendError(
    `cannot reach Kafka at ${source.brokers.join(",")} (from ${describeSource(source)}) while ${doing}: ${rootMessage(cause)}`,
    {
      code: KafkaErrorCode.unavailable,
      hint: "start a broker (for local development: bash docker/kafka/start.sh, on 127.0.0.1:9092) or point KAFKA_BROKERS / [plugin.kafka] bootstrap_servers at a running one",
      docs: `${DOCS}#connecting`,
      cause,
    },
  );
}

/** Anything kafkajs throws while sending: connection trouble reads as unavailable, the rest as a failed publish. */
export function publishFailed(source: BrokerSource, topic: string, cause: unknown): JfastError {
  if (isConnectionProblem(cause)) return kafkaUnavailable(source, `publishing to "${topic}"`, cause);
  return new BackendError(`publishing to "${topic}" failed: ${rootMessage(cause)}`, {
    code: KafkaErrorCode.publishFailed,
    hint: "the events were not stored by the broker; retry, or publish through the outbox so a later attempt sends them",
    docs: DOCS,
    cause,
  });
}

export function topicMissing(topic: string, cause: unknown): ConfigError {
  return new ConfigError(`topic "${topic}" does not exist and could not be created: ${rootMessage(cause)}`, {
    code: KafkaErrorCode.topicMissing,
    hint: `create it (kafka-topics.sh --create --topic ${topic} --partitions <n>), or allow this service to create topics`,
    docs: `${DOCS}#topics`,
    cause,
  });
}

const CONNECTION_ERRORS = new Set([
  "KafkaJSConnectionError",
  "KafkaJSNonRetriableError",
  "KafkaJSNumberOfRetriesExceeded",
  "KafkaJSBrokerNotFound",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSNoBrokerAvailableError",
  "KafkaJSLockTimeout",
]);

export function isConnectionProblem(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { name?: string; code?: string; cause?: unknown; originalError?: unknown };
    if (e.name === "KafkaJSConnectionError" || e.name === "KafkaJSConnectionClosedError" || e.name === "KafkaJSNoBrokerAvailableError") return true;
    if (e.code === "ECONNREFUSED" || e.code === "ENOTFOUND" || e.code === "ETIMEDOUT" || e.code === "EHOSTUNREACH") return true;
    if (!CONNECTION_ERRORS.has(e.name ?? "")) return false;
    current = e.originalError ?? e.cause;
  }
  return false;
}

/** kafkajs wraps the real reason a few levels deep ("Number of retries exceeded" → "Connection error: ..."). */
export function rootMessage(error: unknown): string {
  let current: unknown = error;
  let message = (error as Error)?.message ?? String(error);
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { message?: string; originalError?: unknown; cause?: unknown };
    if (e.message) message = e.message;
    current = e.originalError ?? e.cause;
  }
  return message;
}
