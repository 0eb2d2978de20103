import type { CancelStore } from "../../core/cancel-store.js";
import type { FlowStore } from "../../core/flow-store.js";
import type { LimitStore } from "../../core/limit-store.js";
import type { UniqueStore } from "../../core/unique-store.js";
import type { WorkerStore } from "../../core/backend/workers.js";
import type { BackendLogger } from "./connection.js";
import type { CascadeShape } from "./delay-key.js";
import type { QueueType } from "./topology.js";

export interface RabbitMqBackendOptions {
  /**
   * amqp://user:password@host:5672/vhost (amqps:// for TLS). Several, separated by commas, are nodes of one
   * cluster: the connection uses the first that answers and moves to the next when its node goes away.
   */
  url: string;
  /**
   * The broker queue type of the work queue, the delay cascade and the dead queue; default classic. Quorum
   * queues are replicated over the cluster's nodes (docs/rabbitmq.md#queue-types). Part of the broker topology:
   * a queue declared as one type refuses the other (RABBITMQ_TOPOLOGY_MISMATCH).
   */
  queueType?: QueueType;
  /** The work queue's name; every other name derives from it (see names.ts). */
  queue: string;
  /**
   * The delay cascade's unit and level count (default 100 ms × 25 levels ≈ 38 days). They are broker
   * topology: a queue declared with one shape refuses another, so changing them needs another queue name.
   */
  delay?: Partial<CascadeShape>;
  /** How long an operation waits for the broker (e.g. during a restart) before failing; default 10 s. */
  connectTimeoutMs?: number;
  /**
   * AMQP heartbeat in seconds, unless the URL sets `heartbeat=`; default 30. The broker requeues a silent
   * connection's deliveries after about two heartbeats: how fast a vanished host's jobs come back.
   */
  heartbeatSeconds?: number;
  /** How many recently enqueued ids this process remembers to keep a repeated enqueue a no-op; default 100 000. */
  recentIds?: number;
  /**
   * Where cancellations are recorded (the service's database): without one, cancel answers NOT_SUPPORTED. Read
   * every `cancelReadMs` (default 1 s); a cancelled job's message is dropped when delivered.
   */
  cancellations?: CancelStore;
  cancelReadMs?: number;
  /** Where unique keys are held (the service's database): without one, a unique job is refused (NOT_SUPPORTED). */
  uniqueKeys?: UniqueStore;
  /** Where task limits are counted (the service's database): without one, a limited task is refused (NOT_SUPPORTED). */
  limits?: LimitStore;
  /**
   * Where flows and batches are kept (the service's database): without one, every flow member answers
   * NOT_SUPPORTED. Steps made ready and not published by the process that made them (it died in between) are
   * published by a sweep every `flowSweepMs` (default 5 s) (docs/rabbitmq.md#flows).
   */
  flows?: FlowStore;
  flowSweepMs?: number;
  /** Where its workers register (the service's database): without one, the worker registry answers NOT_SUPPORTED. */
  workers?: WorkerStore;
  logger?: BackendLogger;
}
