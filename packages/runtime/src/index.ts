// The public surface of @jfast/runtime. Curated: add names here on purpose.
export { createJfast } from "./create-jfast.js";
export type { CreateJfastOptions, Jfast } from "./create-jfast.js";
export { task } from "./core/define-task.js";
export type { TaskDefinition, TaskHandler, TaskOptions, TaskTools, AppContext } from "./core/task.js";
export { TaskRegistry } from "./core/registry.js";
export { Job } from "./core/job.js";
export type { JobInit, JobJSON, AttemptError, TraceContext } from "./core/job.js";
export { JobState } from "./core/job-state.js";
export { BackendKind, WORKER_LOST } from "./core/queue-backend.js";
export type { QueueBackend, Depths, DeadJob, JobInfo, EnqueueResult, ClaimParams, RetryDeadParams } from "./core/queue-backend.js";
export type { SqlExecutor, SqlDatabase } from "./core/sql-port.js";
export { backoffDelayMs, MAX_BACKOFF_MS } from "./core/backoff.js";
export { withRequest, currentTenantId, currentRequestId, currentJob } from "./context/context.js";
export type { RequestContext } from "./context/context.js";
export { JfastError, ConfigError, NotSupportedError, JobTimeoutError, BackendError } from "./errors/jfast-error.js";
export { loadConfig } from "./config/load-config.js";
export type { JfastConfig } from "./config/load-config.js";
export { Worker } from "./worker/worker.js";
export type { QueueProvider } from "./queue/queue-provider.js";
export type { Outbox } from "./outbox/outbox.js";
export type { DatabaseProvider } from "./database/database-provider.js";
export { claimOnce } from "./inbox/inbox.js";
export { createLogger } from "./observability/logger.js";
export type { Logger } from "./observability/logger.js";
// Events between services (Kafka) and deploy manifests.
export { on } from "./kafka/on.js";
export type { EventHandler, EventHandlerTools, EventHandlerOptions, EventHandlerDefinition } from "./kafka/on.js";
export type { EventsBus, EventsHealth, BlockedPartition, PartitionLag } from "./kafka/events-bus.js";
