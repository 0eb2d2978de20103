import type { Admin } from "kafkajs";
import { loadKafkajs } from "../kafka/kafkajs.js";
import { ConfigError } from "../errors/jfast-error.js";
import { kafkaUnavailable, type BrokerSource } from "../kafka/kafka-errors.js";
import type { Logger } from "../observability/logger.js";

/** The service's Kafka consumers as a kafka_lag rule sees them: its group and the topics of its `on` handlers. */
export interface KafkaLagSource {
  service: string;
  brokers: BrokerSource;
  /** The group, already prefixed (kafka/config.ts). */
  consumerGroup: string;
  /** Put before every topic ("" for none). */
  topicPrefix: string;
  /** The topics of the service's `on(...)` handlers, as the handlers write them (without the prefix). */
  topics: readonly string[];
}

/** The group/topic furthest behind: its lag summed over its partitions, and its worst partition. */
export interface KafkaLagDetail {
  group: string;
  /** As Kafka names it (with the prefix). */
  topic: string;
  /** Messages behind, summed over the topic's partitions. */
  lag: number;
  partition: number;
  /** Messages behind on that partition. */
  partitionLag: number;
}

export interface KafkaLagReader {
  /** The worst group/topic (of one topic, as written in `on`, when given); null when none is consumed yet. */
  read(topic?: string): Promise<KafkaLagDetail | null>;
  close(): Promise<void>;
}

/** A read is bounded: a broker that does not answer holds the evaluator at most this long. */
const READ_TIMEOUT_MS = 10_000;
/** Rules that share a pass share one read of the offsets. */
const REUSE_MS = 1000;

/**
 * Reads a consumer group's lag for the alerts evaluator with one admin client of its own, made at the first
 * read (so a service without kafka_lag rules opens nothing) and closed on close(). A read that fails drops the
 * client, so the next one connects afresh, and throws KAFKA_UNAVAILABLE naming the brokers and the fix.
 */
export function createKafkaLagReader(source: KafkaLagSource, logger: Logger): KafkaLagReader {
  let admin: Promise<Admin> | null = null;
  let last: { at: number; result: Promise<Map<string, KafkaLagDetail>> } | null = null;
  let closed = false;

  function connect(): Promise<Admin> {
    admin ??= (async () => {
      const { Kafka, logLevel } = await loadKafkajs();
      const kafka = new Kafka({
        clientId: `${source.service}-alerts`,
        brokers: [...source.brokers.brokers],
        connectionTimeout: 3000,
        requestTimeout: 5000,
        retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
        logLevel: logLevel.WARN,
        // The read's own error says what went wrong; kafkajs's lines about it are detail.
        logCreator: () => (entry) => logger.debug(`kafkajs ${entry.namespace}: ${entry.log.message}`, { consumer_group: source.consumerGroup }),
      });
      const client = kafka.admin({ retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 } });
      await client.connect();
      return client;
    })();
    return admin;
  }

  function drop(): void {
    const old = admin;
    admin = null;
    void old?.then((client) => client.disconnect()).catch(() => undefined);
  }

  async function readAll(): Promise<Map<string, KafkaLagDetail>> {
    const client = await connect();
    const wanted = [...new Set(source.topics)].map((t) => source.topicPrefix + t);
    // A topic nobody has published to yet (and that the consumer has not created) is no lag.
    const existing = new Set(await client.listTopics());
    const topics = wanted.filter((t) => existing.has(t)).sort();
    const worst = new Map<string, KafkaLagDetail>();
    if (topics.length === 0) return worst;
    const committed = await client.fetchOffsets({ groupId: source.consumerGroup, topics });
    for (const topic of topics) {
      const mine = committed.find((c) => c.topic === topic)?.partitions ?? [];
      let detail: KafkaLagDetail | null = null;
      let sum = 0;
      for (const end of await client.fetchTopicOffsets(topic)) {
        const at = mine.find((p) => p.partition === end.partition)?.offset;
        // Before its first commit the group starts at the beginning (fromBeginning), so the whole partition waits.
        const from = at !== undefined && at !== "-1" ? at : end.low;
        const lag = Math.max(0, Number(BigInt(end.high) - BigInt(from)));
        sum += lag;
        if (!detail || lag > detail.partitionLag) detail = { group: source.consumerGroup, topic, lag: 0, partition: end.partition, partitionLag: lag };
      }
      if (detail) worst.set(topic, { ...detail, lag: sum });
    }
    return worst;
  }

  function readShared(): Promise<Map<string, KafkaLagDetail>> {
    const now = Date.now();
    if (last && now - last.at < REUSE_MS) return last.result;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS / 1000}s`)), READ_TIMEOUT_MS);
      timer.unref();
    });
    const result = Promise.race([readAll(), timeout])
      .catch((cause: unknown) => {
        drop();
        throw kafkaUnavailable(source.brokers, `reading the lag of consumer group "${source.consumerGroup}" for an alert`, cause);
      })
      .finally(() => clearTimeout(timer));
    last = { at: now, result };
    return result;
  }

  return {
    async read(topic) {
      if (closed) throw new Error("the Kafka lag reader is closed");
      const worst = await readShared();
      if (topic !== undefined) return worst.get(source.topicPrefix + topic) ?? null;
      let max: KafkaLagDetail | null = null;
      for (const detail of worst.values()) if (!max || detail.lag > max.lag) max = detail;
      return max;
    },
    async close() {
      closed = true;
      const old = admin;
      admin = null;
      await old?.then((client) => client.disconnect()).catch(() => undefined);
    },
  };
}

/**
 * A kafka_lag rule of jfast.toml needs Kafka: without `[plugin.kafka]` it is refused at load. A service whose kafka
 * plugin is only turned off in this process (JFAST_DISABLE_PLUGINS) still starts; its evaluator says it cannot
 * read the lag instead.
 */
export function refuseKafkaLagWithoutKafka(rules: readonly { name: string; rule: string }[] | undefined, at: { file: string; kafka: "configured" | "turned-off" | "absent" }): void {
  const rule = rules?.find((r) => r.rule === "kafka_lag");
  if (!rule || at.kafka !== "absent") return;
  throw new ConfigError(`${at.file}: [[alerts]] "${rule.name}" is a kafka_lag rule, and this service has no Kafka configured`, {
    code: "CONFIG_PLUGIN_MISSING",
    hint: 'add "kafka" to [plugins] enabled and configure [plugin.kafka] (bootstrap_servers, or KAFKA_BROKERS), or remove the alert',
    docs: "jfast docs alerts#rules",
  });
}
