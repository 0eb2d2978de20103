import type { KafkaConfig } from "../kafka/config.js";
import { InternalPort } from "./ports.js";

/**
 * The Kafka container: KRaft mode (no ZooKeeper), one node that is both broker and controller, two client
 * listeners. A client bootstraps once and then reconnects to the address the broker *advertises*, so a broker
 * that only advertised its compose hostname would let a process on the host connect and then hang. Hence:
 *   INTERNAL  kafka:9092                         for containers in the compose network
 *   EXTERNAL  <advertised_host>:<host_port>      published on the host as host_port → 9094
 * host_port is one setting for both the published port and the advertised one, so they cannot disagree.
 */
export interface KafkaContainerParams {
  kafka: KafkaConfig;
  /** More host ports that reach the external listener (other services' default bootstrap ports). */
  extraHostPorts?: readonly number[];
}

/** A fixed cluster id: the container formats its storage with it on first start (22 chars of base64url). */
export const KAFKA_CLUSTER_ID = "amZhc3Qta3JhZnQtMDAwMQ";

export function kafkaContainer(params: KafkaContainerParams): Record<string, unknown> {
  const { kafka } = params;
  const bitnami = /(^|\/)bitnami/.test(kafka.image);
  // The official apache/kafka image reads KAFKA_<PROPERTY>; Bitnami's images read KAFKA_CFG_<PROPERTY>.
  const prefix = bitnami ? "KAFKA_CFG_" : "KAFKA_";
  const settings: Record<string, string> = {
    NODE_ID: "1",
    PROCESS_ROLES: "broker,controller",
    LISTENERS: `INTERNAL://:${InternalPort.kafkaInternal},EXTERNAL://:${InternalPort.kafkaExternal},CONTROLLER://:${InternalPort.kafkaController}`,
    ADVERTISED_LISTENERS: `INTERNAL://kafka:${InternalPort.kafkaInternal},EXTERNAL://${kafka.advertisedHost}:${kafka.hostPort}`,
    LISTENER_SECURITY_PROTOCOL_MAP: "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    INTER_BROKER_LISTENER_NAME: "INTERNAL",
    CONTROLLER_LISTENER_NAMES: "CONTROLLER",
    CONTROLLER_QUORUM_VOTERS: `1@kafka:${InternalPort.kafkaController}`,
    NUM_PARTITIONS: "3",
    OFFSETS_TOPIC_REPLICATION_FACTOR: "1",
    TRANSACTION_STATE_LOG_REPLICATION_FACTOR: "1",
    TRANSACTION_STATE_LOG_MIN_ISR: "1",
    GROUP_INITIAL_REBALANCE_DELAY_MS: "0",
  };
  const environment: Record<string, string> = Object.fromEntries(Object.entries(settings).map(([k, v]) => [`${prefix}${k}`, v]));
  if (bitnami) environment.KAFKA_KRAFT_CLUSTER_ID = KAFKA_CLUSTER_ID;
  else environment.CLUSTER_ID = KAFKA_CLUSTER_ID;

  const hostPorts = [kafka.hostPort, ...(params.extraHostPorts ?? []).filter((p) => p !== kafka.hostPort)];
  const tools = bitnami ? "/opt/bitnami/kafka/bin" : "/opt/kafka/bin";
  return {
    image: kafka.image,
    environment,
    ports: [...new Set(hostPorts)].map((port) => `${port}:${InternalPort.kafkaExternal}`),
    healthcheck: {
      test: ["CMD-SHELL", `${tools}/kafka-broker-api-versions.sh --bootstrap-server localhost:${InternalPort.kafkaInternal} > /dev/null 2>&1`],
      interval: "5s",
      timeout: "10s",
      retries: 30,
      start_period: "10s",
    },
  };
}
