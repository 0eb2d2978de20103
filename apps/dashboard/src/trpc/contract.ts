"use client";
import type { JobView } from "@jfast/runtime/admin";
import { adminClient } from "./client";
import type { AdminInputs, AdminOutputs } from "./types";

/**
 * Admin procedures added after the first release of the admin API (docs/admin-api.md). A service on an older
 * runtime answers them with NOT_FOUND; the pages show that as "not offered by this service" rather than as an
 * outage, so one dashboard can watch services on different runtime versions.
 */

export type JobState = JobView["state"];

export type QueuesView = AdminOutputs["queues"]["list"];
export type TaskQueueView = QueuesView["tasks"][number];

export type ThroughputView = AdminOutputs["overview"]["throughput"];
export type ThroughputPoint = ThroughputView["points"][number];

export type JobSearchInput = Omit<AdminInputs["jobs"]["search"], "limit"> & { limit?: number };
export type JobSearchView = AdminOutputs["jobs"]["search"];

export type ReplayView = AdminOutputs["deadLetters"]["replays"][number];

export interface PartitionView {
  topic: string;
  partition: number;
  committedOffset: string | null;
  endOffset: string;
  lag: number;
  blocked: null | { offset: string; error: string; since: string; attempts: number };
}

export interface EventsStatusView {
  enabled: boolean;
  reported: boolean;
  group: string | null;
  error: string | null;
  /** JFAST_DISABLE_PLUGINS turned the plugin off in this process although jfast.toml enables it. */
  turnedOff?: boolean;
  /** When the offsets were read from the broker; null before the first read. */
  offsetsReadAt?: string | null;
  partitions: PartitionView[];
}

/** An answer of the admin API that was a refusal or an outage, with tRPC's error code (e.g. NOT_FOUND). */
export class AdminCallError extends Error {
  readonly data: { code: string; httpStatus: number };
  constructor(message: string, data: { code: string; httpStatus: number }) {
    super(message);
    this.name = "AdminCallError";
    this.data = data;
  }
}

/**
 * Calls `procedure` on `service` through the dashboard's proxy, in tRPC's wire format (GET `?input=` for
 * queries, a JSON body for mutations; `{ result: { data } }` back).
 */
export async function callAdmin<T>(service: string, procedure: string, input?: unknown, kind: "query" | "mutation" = "query"): Promise<T> {
  const base = `/api/admin/${encodeURIComponent(service)}/${procedure}`;
  const response =
    kind === "query"
      ? await fetch(input === undefined ? base : `${base}?input=${encodeURIComponent(JSON.stringify(input))}`)
      : await fetch(base, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(input ?? null) });
  let body: { result?: { data: T }; error?: { message?: string; data?: { code?: string; httpStatus?: number } } };
  try {
    body = await response.json();
  } catch {
    throw new AdminCallError(`${service} answered ${procedure} with HTTP ${response.status} and no JSON`, { code: "BAD_GATEWAY", httpStatus: response.status });
  }
  if (body.error || !response.ok || !body.result) {
    throw new AdminCallError(body.error?.message ?? `HTTP ${response.status}`, { code: body.error?.data?.code ?? "INTERNAL_SERVER_ERROR", httpStatus: body.error?.data?.httpStatus ?? response.status });
  }
  return body.result.data;
}

export function errorMessageOf(error: unknown): string {
  return (error as Error)?.message ?? String(error);
}

/** True when the service runs a runtime that does not have this procedure yet. */
export function isMissingProcedure(error: unknown): boolean {
  const data = (error as { data?: { code?: string } } | null)?.data;
  return data?.code === "NOT_FOUND" && /no procedure|not found/i.test((error as Error).message ?? "");
}

export const contract = {
  queuesList: (service: string, input: { tenant?: string }) => adminClient(service).queues.list.query(compact(input)),
  queuesPause: (service: string, task: string) => adminClient(service).queues.pause.mutate({ task }),
  queuesResume: (service: string, task: string) => adminClient(service).queues.resume.mutate({ task }),
  throughput: (service: string, input: { minutes?: number; task?: string }) => adminClient(service).overview.throughput.query(compact(input)),
  jobsSearch: (service: string, input: JobSearchInput) => adminClient(service).jobs.search.query(input),
  retryMatching: (service: string, input: AdminInputs["deadLetters"]["retryMatching"]) => adminClient(service).deadLetters.retryMatching.mutate(input),
  replays: (service: string) => adminClient(service).deadLetters.replays.query(),
  eventsStatus: (service: string) => callAdmin<EventsStatusView>(service, "events.status"),
};

function compact<T extends object>(input: T): T | undefined {
  const entries = Object.entries(input).filter(([, v]) => v !== undefined && v !== "");
  return entries.length ? (Object.fromEntries(entries) as T) : undefined;
}
