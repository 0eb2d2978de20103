import type { Alerter } from "../alerts/alerter.js";
import type { QueueConfig } from "../queue/config.js";
import type { TaskRegistry } from "../core/registry.js";
import type { ReadinessReport } from "../http/readiness.js";
import type { EventsStatus } from "../kafka/events-bus.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { SqlDatabase } from "../core/sql-port.js";
import type { ScheduleControl } from "../scheduler/schedule-control.js";
import type { AuditLog } from "./audit.js";
import type { ReplayLog } from "./replays.js";
import type { Redaction } from "./redact.js";
import type { ScanLimiter } from "./scan-limit.js";

/**
 * Everything the admin router reads, handed over by the composition root. The router reaches each feature
 * through the runtime's own interfaces (the QueueBackend seam, the outbox, the scheduler), never through a
 * backend's tables, so it works the same on every backend. A feature that is not running answers with a
 * typed "not enabled" result rather than invented numbers.
 */
export interface AdminSources {
  service: { name: string; environment: string };
  /** Which plugins jfast.toml enables (the dashboard shows what exists). */
  plugins: readonly string[];
  registry: TaskRegistry;
  queue(): QueueProvider | null;
  /** The alerts evaluator and its store (docs/alerts.md); null where the service keeps no alerts. */
  alerts?: () => Alerter | null;
  /** `[plugin.queue]` with its named queues (null without the queue plugin). */
  queueConfig?: QueueConfig | null;
  outbox(): Outbox | null;
  readiness(): Promise<ReadinessReport>;
  scheduler(): ScheduleSource | null;
  /** The service's database once started (the inbox a replay preview reads); null without the database plugin. */
  database?(): SqlDatabase | null;
  /**
   * The control of schedules at run time: the running scheduler's, or one opened on the scheduler's store for the
   * call (closed by `close`). Null where there is no shared store (no queue, or the memory queue without a scheduler).
   */
  scheduleControl?(): Promise<{ control: ScheduleControl; close(): Promise<void> } | null>;
  contracts(): ContractsSource | null;
  /** The kafka plugin once started in this process; null when it is off or not started. */
  events(): { status(): Promise<EventsStatus> } | null;
  /** Plugins jfast.toml enables that JFAST_DISABLE_PLUGINS turns off in this process. */
  disabledPlugins: readonly string[];
  audit: AuditLog;
  /** How often each caller may run a scanning view (scan-limit.ts). */
  scans: ScanLimiter;
  /** Throttled bulk retries running in (or recently finished by) this process. */
  replays: ReplayLog;
  /** Payload fields named in `[admin] redact` (and the defaults), and their values in error text, hidden before anything leaves the service. */
  redaction: Redaction;
  logger: Logger;
}

/** What a scheduler offers the admin API. A scheduler that does not implement it is shown as running, without detail. */
export interface ScheduleSource {
  describeSchedules(params: { count: number }): Promise<ScheduleView[]>;
  /** Changes at run time (schedules.create|update|pause|resume|delete|trigger); absent: this scheduler cannot. */
  control?: ScheduleControl | null;
}

export interface ScheduleView {
  name: string;
  task: string;
  /** The cron expression, or the interval in words ("every 5 minutes"). */
  expression: string;
  kind: "cron" | "every";
  timezone: string;
  /** Upcoming ticks, ISO-8601 UTC. */
  nextTicks: string[];
  lastTickAt: string | null;
  lastError: string | null;
  /** True when a tick that should have fired by now was not claimed (the scheduler is behind or stopped). */
  late: boolean;
  /** Ticks due in the last 24 hours (over a minute ago) that were never claimed. */
  missedTicks: number;
  /** "code": declared in a tasks file (pause, resume, trigger only); "runtime": made through the admin API or CLI. */
  origin?: "code" | "runtime";
  paused?: boolean;
  payload?: Record<string, unknown>;
  catchUp?: boolean;
  /** The interval in milliseconds of an `every` schedule (the form edits it). */
  everyMs?: number;
  updatedBy?: string | null;
  updatedAt?: string | null;
}

/** What the contracts checker offers: the same structure as `jfast contracts show --json`, violations on their edges. */
export interface ContractsSource {
  graph(): Promise<ContractsGraph>;
}

export interface ContractsGraph {
  /** "contracts": from contracts.toml and the checker; "registry": only what this service's tasks reveal. */
  source: "contracts" | "registry";
  nodes: ContractNode[];
  edges: ContractEdge[];
  /** Violations that belong to no single edge. */
  violations: ContractViolation[];
}

export interface ContractNode {
  /** "module:<name>", "event:<type>", or "topic:<topic>/<type>" (an event type on a Kafka topic). */
  id: string;
  kind: "module" | "event" | "topic";
  label: string;
}

export interface ContractEdge {
  id: string;
  /** produces: module → topic, consumes: topic → module (over Kafka); the others inside the service. */
  kind: "publishes" | "subscribes" | "depends" | "produces" | "consumes";
  from: string;
  to: string;
  /** Declared in contracts.toml (false: only the code shows it). Absent in a registry graph. */
  declared?: boolean;
  /** Subscriber task names (subscribes) or enqueued task names (depends). */
  labels?: string[];
  violations: ContractViolation[];
}

export interface ContractViolation {
  code: string;
  message: string;
  /** The change that makes it go away, when the checker knows one. */
  fix?: string;
}
