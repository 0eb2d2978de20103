import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AdminRouter } from "@jfast/runtime/admin";

/** What the admin procedures return, as the browser receives them (after JSON). */
export type AdminOutputs = inferRouterOutputs<AdminRouter>;
export type AdminInputs = inferRouterInputs<AdminRouter>;
export type DeadLetterPage = AdminOutputs["deadLetters"]["list"];
export type DeadLetterItem = DeadLetterPage["items"][number];
export type ErrorGroupItem = AdminOutputs["deadLetters"]["groups"]["groups"][number];
export type OverviewData = AdminOutputs["overview"]["get"];
export type TaskQueueView = AdminOutputs["queues"]["list"]["tasks"][number];
export type ThroughputPoint = AdminOutputs["overview"]["throughput"]["points"][number];
export type JobSearchInput = Omit<AdminInputs["jobs"]["search"], "limit"> & { limit?: number };
export type JobSearchView = AdminOutputs["jobs"]["search"];
export type JobState = JobSearchView["items"][number]["state"];
export type ReplayView = AdminOutputs["deadLetters"]["replays"][number];
export type EventsStatusView = AdminOutputs["events"]["status"];
export type PartitionView = EventsStatusView["partitions"][number];
export type JobListInput = AdminInputs["jobs"]["list"];
export type JobListView = AdminOutputs["jobs"]["list"];
export type JobListItem = JobListView["items"][number];
export type ListStateName = JobListInput["state"];
export type JobActionName = JobListView["actions"][number];
export type FlowListInput = AdminInputs["flows"]["list"];
export type FlowListPage = AdminOutputs["flows"]["list"];
export type FlowListItem = FlowListPage["items"][number];
export type FlowStateName = FlowListItem["state"];
export type FlowDetailView = NonNullable<AdminOutputs["flows"]["get"]["flow"]>;
export type FlowStepItem = FlowDetailView["steps"][string];
