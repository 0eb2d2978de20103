/**
 * Where each container of a service lands on the host, as an offset from `[service] base_port`. Services of
 * one workspace get base ports 100 apart by convention (8000, 8100, ...), so nothing collides. Kafka's port
 * can be moved with `[plugin.kafka] host_port`: it is both what compose publishes and what the broker
 * advertises to the host, so the two can never disagree.
 */
export const PortOffset = {
  api: 0,
  postgres: 1,
  kafka: 2,
  redis: 3,
  rabbitmq: 6,
  rabbitmqManagement: 7,
} as const;

/** Ports inside the compose network (what containers reach each other on). */
export const InternalPort = {
  postgres: 5432,
  redis: 6379,
  rabbitmq: 5672,
  rabbitmqManagement: 15672,
  /** Clients inside the compose network bootstrap here and are told `kafka:9092`. */
  kafkaInternal: 9092,
  kafkaController: 9093,
  /** Published on the host as host_port and advertised as `advertised_host:host_port`. */
  kafkaExternal: 9094,
} as const;

/** Images of the infrastructure containers; Kafka's comes from `[plugin.kafka] image`. */
export const InfraImage = {
  postgres: "postgres:16-alpine",
  redis: "redis:7-alpine",
  rabbitmq: "rabbitmq:3.13-management-alpine",
} as const;

/** Graceful stop of a worker: the runtime's default grace (25 s) plus room to exit. */
export const WORKER_GRACE_SECONDS = 30;
