import type { AdminViews } from "./backend/admin.js";
import type { BackendCapabilities } from "./backend/capabilities.js";
import type { FlowProtocol } from "./backend/flows.js";
import type { Maintenance } from "./backend/maintenance.js";
import type { JobProtocol } from "./backend/protocol.js";

/**
 * The seam every queue backend implements (memory, postgres, redis, rabbitmq), by role: the job protocol a worker
 * needs (core/backend/protocol.ts), the admin views (admin.ts) and maintenance (maintenance.ts), with what the
 * backend can do as data (capabilities.ts). Backends are leaves: they import core and errors only, translate
 * driver errors into JfastError at this boundary, and never hand driver rows back.
 */
export type QueueBackend = JobProtocol &
  AdminViews &
  Maintenance &
  FlowProtocol & {
    readonly kind: BackendKind;
    readonly capabilities: BackendCapabilities;
  };

export const BackendKind = {
  memory: "memory",
  postgres: "postgres",
  redis: "redis",
  rabbitmq: "rabbitmq",
} as const;
export type BackendKind = (typeof BackendKind)[keyof typeof BackendKind];

export type { AdminViews, BackendCapabilities, FlowProtocol, JobProtocol, Maintenance };
export type { FlowDetail, FlowStepInfo, FlowSummary, ListFlowsParams } from "./backend/flows.js";
export { notSupported, type Capability } from "./backend/capabilities.js";
export {
  WORKER_LOST,
  workerLostError,
  type CancelResult,
  type ClaimParams,
  type EnqueuedJob,
  type EnqueueResult,
  type LeaseReport,
  type QueueEnqueueResult,
  type SlotOffer,
  type SnoozeParams,
  type CompleteParams,
} from "./backend/protocol.js";
export {
  ListOrder,
  ListState,
  type DeadJob,
  type DeadSearch,
  type Depths,
  type JobActionResult,
  type JobUpdate,
  type JobInfo,
  type JobListing,
  type ListJobsParams,
  type RequestJob,
  type RetryDeadParams,
  type TaskDepths,
} from "./backend/admin.js";
