// @jfast/runtime/admin: what a dashboard needs to talk to the admin API: types, and one pure function that
// joins the contracts graphs of several services (no driver, nothing of the server side).
export { mergeServiceGraphs } from "./contracts/workspace-graph.js";
export type { WorkspaceEdge, WorkspaceGraph, WorkspaceNode } from "./contracts/workspace-graph.js";
export type { AdminRouter } from "./admin/root.js";
export type { AdminRole, AdminPrincipal, ActorRole, AdminTokenKind } from "./admin/tokens.js";
export type { AuditEntry } from "./admin/audit.js";
export type { DeadFilter } from "./admin/dead-scan.js";
export type { DeadLetterView, JobDetailView, JobView, LastErrorView } from "./admin/views.js";
export type { RetryMark } from "./admin/retry-marks.js";
export type { DeadLetterPage, ErrorGroupView } from "./admin/routers/dead-letters.js";
export type { OverviewView } from "./admin/routers/overview.js";
export type { SchedulesView } from "./admin/routers/schedules.js";
export type { OutboxView } from "./admin/routers/outbox.js";
export type { EventsView } from "./admin/routers/events.js";
export type { ContractsGraph, ContractNode, ContractEdge, ContractViolation, ScheduleView, ScheduleSource, ContractsSource } from "./admin/sources.js";
export type { ReadinessReport, CheckStatus } from "./http/readiness.js";
export type { AttemptError } from "./core/job.js";
export type { Depths, ListState, ListOrder, JobActionResult } from "./core/queue-backend.js";
export type { JobListView, JobAction } from "./admin/routers/job-listing.js";
export type { JobUnique } from "./core/unique.js";
export type { FlowListView, FlowView, FlowStepView, FlowGetView } from "./admin/flow-views.js";
export type { FlowSummary, FlowStepInfo } from "./core/backend/flows.js";
export type { FlowState } from "./core/flow.js";
