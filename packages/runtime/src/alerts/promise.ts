import type { TraceEntry, TraceView } from "../admin/trace.js";
import type { ContractsGraph } from "../admin/sources.js";
import { closest } from "../contracts/closest.js";
import { NotSupportedError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import type { Outbox } from "../outbox/outbox.js";
import type { EventOutboxRow } from "../outbox/outbox-rows.js";
import { parseDuration, type AlertRule, type PeerService } from "./config.js";

/**
 * Where a broken promise's request stopped (docs/alerts.md#promises): the `when` event's outbox row was not relayed
 * (`outbox`), it reached Kafka and no service it goes to has a job for the request (`kafka`), the job that received
 * it has not finished (`subscriber_job`), or a later job of that service — the one that should publish `then` —
 * has not, or every job finished and none published it (`publishing_job`).
 */
export const PromiseHop = { outbox: "outbox", kafka: "kafka", subscriberJob: "subscriber_job", publishingJob: "publishing_job" } as const;
export type PromiseHop = (typeof PromiseHop)[keyof typeof PromiseHop];

/** How each hop reads in a sentence. */
export const HOP_WORDS: Record<PromiseHop, string> = {
  outbox: "the outbox",
  kafka: "Kafka",
  subscriber_job: "the subscriber job",
  publishing_job: "the other service's job",
};

/** One request whose `then` event did not come in time. */
export interface BrokenPromise {
  requestId: string;
  /** The `when` event's id and when it was written. */
  eventId: string;
  publishedAt: string;
  /** `publishedAt` + `within`. */
  dueAt: string;
  hop: PromiseHop;
  /** The service the request waits in. */
  service: string;
  /** What was seen there, in a sentence. */
  detail: string;
}

/** One evaluation of a promise rule. */
export interface PromiseReport {
  /** Requests whose `when` event is due in the window. */
  checked: number;
  broken: number;
  /** The oldest broken request, its late hop named from its timeline; null when none is broken. */
  example: BrokenPromise | null;
}

export interface PromiseChecker {
  check(rule: AlertRule): Promise<PromiseReport>;
}

/** The report of a promise rule's last evaluation (its notification names the example). */
const reports = new WeakMap<AlertRule, PromiseReport>();
export function promiseReportOf(rule: AlertRule): PromiseReport | null {
  return reports.get(rule) ?? null;
}

/** Requests read per pass at most; the window's oldest first. */
export const PROMISE_REQUESTS = 500;
const PARALLEL = 8;
const GRAPH_TTL_MS = 60_000;

/**
 * Evaluates promise rules for one service: the `when` events come from its outbox (event rows within a request,
 * written in the window), each request's timeline from this service (trace) and from every `[[alerting.services]]`
 * entry through its admin API's trace.get, the way the dashboard's Timeline page joins them. A request seen kept
 * is remembered and not asked about again.
 */
export function createPromiseChecker(params: {
  service: string;
  outbox: () => Outbox | null;
  /** This service's share of a request's timeline (trace.get). */
  trace: (requestId: string) => Promise<TraceView>;
  /** This service's contracts graph (contracts.graph). */
  graph: () => Promise<ContractsGraph | null>;
  peers: readonly PeerService[];
  timeoutMs: number;
  logger: Logger;
  /** Replaces fetch for the peers' admin APIs (tests). */
  fetch?: typeof fetch;
}): PromiseChecker {
  const { service, peers, logger } = params;
  const call = params.fetch ?? fetch;
  const kept = new Map<string, Set<string>>();
  const graphs = new Map<string, { at: number; graph: ContractsGraph | null }>();
  const warned = new Set<string>();

  async function peerCall<T>(peer: PeerService, procedure: string, input: unknown): Promise<T> {
    const url = `${peer.url}/jfast/admin/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`;
    const response = await call(url, { headers: { authorization: `Bearer ${peer.token}`, "user-agent": "jfast-alerts" }, signal: AbortSignal.timeout(params.timeoutMs) });
    const body = (await response.json().catch(() => null)) as { result?: { data: T }; error?: { message?: string } } | null;
    if (!response.ok || !body?.result) throw new Error(`${procedure} answered ${response.status}${body?.error?.message ? `: ${body.error.message}` : ""}`);
    return body.result.data;
  }

  async function graphOf(name: string): Promise<ContractsGraph | null> {
    const cached = graphs.get(name);
    if (cached && Date.now() - cached.at < GRAPH_TTL_MS) return cached.graph;
    const peer = peers.find((p) => p.name === name);
    const graph = await (peer ? peerCall<ContractsGraph>(peer, "contracts.graph", undefined) : params.graph()).catch(() => null);
    // A service that did not answer is asked again at the next pass.
    if (graph) graphs.set(name, { at: Date.now(), graph });
    return graph;
  }

  /** The services whose graph publishes `then`; null when no graph tells (then every other service is followed). */
  async function publishersOf(rule: AlertRule): Promise<string[] | null> {
    const names = [service, ...peers.map((p) => p.name)];
    const known = await Promise.all(names.map(async (name) => ({ name, graph: await graphOf(name) })));
    const publishers = known.filter((k) => k.graph && publishes(k.graph, rule.then!)).map((k) => k.name);
    if (publishers.length > 0) return publishers;
    const told = known.filter((k) => k.graph && eventTypes(k.graph).size > 0);
    const key = `${rule.name}\u0000${rule.then}`;
    // Said once, and only when every service answered: one that is down may be the publisher.
    if (told.length > 0 && known.every((k) => k.graph) && !warned.has(key)) {
      warned.add(key);
      const all = [...new Set(told.flatMap((k) => [...eventTypes(k.graph!)]))];
      const near = closest(rule.then!, all);
      logger.warn(`alert "${rule.name}": no contracts graph of ${told.map((k) => k.name).join(", ")} publishes "${rule.then}"; the promise can only be kept by a service it cannot see`, {
        alert: rule.name,
        fix: near ? `did you mean then = "${near}"?` : `add the service that publishes ${rule.then} to [[alerting.services]] (jfast docs alerts#promises)`,
      });
    }
    return null;
  }

  async function timelines(requestId: string): Promise<{ views: TraceView[]; unreachable: Array<{ service: string; error: string }> }> {
    const unreachable: Array<{ service: string; error: string }> = [];
    const views = await Promise.all([
      params.trace(requestId),
      ...peers.map((peer) =>
        peerCall<TraceView>(peer, "trace.get", { id: requestId, limit: 200 }).catch((error: unknown) => {
          unreachable.push({ service: peer.name, error: (error as Error).message });
          return null;
        }),
      ),
    ]);
    return { views: views.filter((v): v is TraceView => v !== null), unreachable };
  }

  return {
    async check(rule) {
      const outbox = params.outbox();
      if (!outbox) {
        throw new NotSupportedError(`alert "${rule.name}" is a promise, and this process has no outbox to read its "${rule.when}" events from`, {
          hint: `enable "database", "outbox" and "kafka" in [plugins] of the service that publishes ${rule.when}, and write the rule there`,
          docs: "jfast docs alerts#promises",
        });
      }
      const withinMs = parseDuration(rule.within!)!;
      const windowMs = parseDuration(rule.window)!;
      const now = Date.now();
      // The requests whose deadline fell in the window: written between now − within − window and now − within.
      const rows = await outbox.eventsByType({ type: rule.when!, from: new Date(now - withinMs - windowMs), to: new Date(now - withinMs), limit: PROMISE_REQUESTS });
      const first = new Map<string, EventOutboxRow>();
      for (const row of rows) if (!first.has(row.requestId)) first.set(row.requestId, row);
      const key = `${rule.name}\u0000${rule.when}\u0000${rule.then}`;
      const seen = kept.get(key) ?? new Set<string>();
      // Forget the requests that left the window.
      for (const id of seen) if (!first.has(id)) seen.delete(id);
      kept.set(key, seen);

      const open = [...first.values()].filter((row) => !seen.has(row.requestId));
      const broken: Array<{ row: EventOutboxRow; views: TraceView[]; unreachable: Array<{ service: string; error: string }> }> = [];
      for (let i = 0; i < open.length; i += PARALLEL) {
        await Promise.all(
          open.slice(i, i + PARALLEL).map(async (row) => {
            const seenBy = await timelines(row.requestId);
            if (seenBy.views.some((view) => view.entries.some((e) => keeps(e, rule.then!)))) seen.add(row.requestId);
            else broken.push({ row, ...seenBy });
          }),
        );
      }
      broken.sort((a, b) => Date.parse(a.row.createdAt) - Date.parse(b.row.createdAt));
      const oldest = broken[0];
      let example: BrokenPromise | null = null;
      if (oldest) {
        const late = lateHop({ row: oldest.row, service, views: oldest.views, unreachable: oldest.unreachable, publishers: await publishersOf(rule), when: rule.when!, then: rule.then! });
        example = {
          requestId: oldest.row.requestId,
          eventId: oldest.row.eventId,
          publishedAt: oldest.row.createdAt,
          dueAt: new Date(Date.parse(oldest.row.createdAt) + withinMs).toISOString(),
          ...late,
        };
      }
      const report = { checked: first.size, broken: broken.length, example };
      reports.set(rule, report);
      return report;
    },
  };
}

/** True when the entry is the `then` event: an event of that type, or its outbox row to a Kafka topic. */
function keeps(entry: TraceEntry, then: string): boolean {
  return (entry.kind === "event" && entry.name === then) || (entry.kind === "kafka" && entry.name.startsWith(`${then} → `));
}

/** Every event type a graph names: local events and the types carried on Kafka topics. */
export function eventTypes(graph: ContractsGraph): Set<string> {
  const types = new Set<string>();
  for (const node of graph.nodes) {
    if (node.id.startsWith("event:")) types.add(node.id.slice("event:".length));
    else if (node.id.startsWith("topic:")) {
      const type = node.id.slice(node.id.lastIndexOf("/") + 1);
      if (type !== "*") types.add(type);
    }
  }
  return types;
}

/** True when a module of the graph publishes the type, locally or to a topic. */
export function publishes(graph: ContractsGraph, type: string): boolean {
  return graph.edges.some((e) => (e.kind === "publishes" && e.to === `event:${type}`) || (e.kind === "produces" && e.to.startsWith("topic:") && e.to.endsWith(`/${type}`)));
}

const isJob = (e: TraceEntry) => e.kind === "job" || e.kind === "subscriber";

function describeJob(entry: TraceEntry, view: TraceView): string {
  const failed = view.entries.filter((e) => e.kind === "attempt" && e.parentId === entry.id && e.outcome === "failed").length;
  const state =
    (entry.outcome === "ready" || entry.outcome === "scheduled") && failed > 0
      ? `waiting to retry after ${failed} failed attempt${failed === 1 ? "" : "s"}`
      : entry.outcome === "ready"
        ? "waiting for a worker"
        : entry.outcome === "scheduled"
          ? "scheduled for later"
          : entry.outcome;
  return `${entry.service}'s job ${entry.name} (${entry.id}) is ${state}${entry.error ? `: ${entry.error}` : ""}`;
}

/**
 * Names the hop a broken promise's request is late at, from its timeline across the services (docs/alerts.md#promises).
 * `publishers`: the services whose contracts graph publishes `then` (null: unknown, every other service counts).
 */
export function lateHop(params: {
  row: EventOutboxRow;
  service: string;
  views: readonly TraceView[];
  unreachable: ReadonlyArray<{ service: string; error: string }>;
  publishers: readonly string[] | null;
  when: string;
  then: string;
}): { hop: PromiseHop; service: string; detail: string } {
  const { row, service, when, then } = params;
  if (row.state !== "delivered") {
    const error = row.lastError ? `; last error: ${row.lastError}` : "";
    const detail =
      row.state === "dead"
        ? `the relay gave up on the outbox row ${row.id} after ${row.attempts} attempt${row.attempts === 1 ? "" : "s"}${error}: ${when} never reached topic ${row.destination}`
        : `the outbox row ${row.id} is still pending after ${row.attempts} attempt${row.attempts === 1 ? "" : "s"}${error}: the relay has not sent ${when} to topic ${row.destination}`;
    return { hop: PromiseHop.outbox, service, detail };
  }
  const others = [...params.views.map((v) => v.service), ...params.unreachable.map((u) => u.service)].filter((s) => s !== service);
  // Where the request goes on: the services that publish `then`, else the other services, else this one (it consumes its own topic).
  const downstream = params.publishers?.length ? [...params.publishers] : others.length > 0 ? others : [service];
  const jobs = params.views
    .filter((v) => downstream.includes(v.service))
    .flatMap((view) => view.entries.filter((e) => isJob(e) && (view.service !== service || Date.parse(e.startedAt) >= Date.parse(row.createdAt))).map((entry) => ({ entry, view })))
    .sort((a, b) => Date.parse(a.entry.startedAt) - Date.parse(b.entry.startedAt));
  const silent = params.unreachable.filter((u) => downstream.includes(u.service));
  const notes = params.views.filter((v) => downstream.includes(v.service) && !v.complete).flatMap((v) => v.notes.map((n) => `${v.service}: ${n}`));
  const noted = (text: string) => (notes.length > 0 ? `${text} (${notes.join("; ")})` : text);
  if (jobs.length === 0) {
    const waiting = silent[0]?.service ?? downstream[0]!;
    const answer = silent.length > 0 ? `; ${silent.map((u) => `${u.service} did not answer (${u.error})`).join("; ")}` : "";
    return {
      hop: PromiseHop.kafka,
      service: waiting,
      detail: noted(`${when} reached topic ${row.destination} at ${row.deliveredAt}, and ${downstream.join(" or ")} has no job for the request: its consumer has not handled the event${answer}`),
    };
  }
  const [received, ...later] = jobs;
  if (received!.entry.outcome !== "completed") return { hop: PromiseHop.subscriberJob, service: received!.entry.service, detail: noted(describeJob(received!.entry, received!.view)) };
  const pending = later.find((j) => j.entry.outcome !== "completed");
  if (pending) return { hop: PromiseHop.publishingJob, service: pending.entry.service, detail: noted(describeJob(pending.entry, pending.view)) };
  const last = jobs.at(-1)!.entry;
  return {
    hop: PromiseHop.publishingJob,
    service: last.service,
    detail: noted(`every job ${last.service} ran for the request completed (the last: ${last.name}, ${last.id}) and none published ${then} through the outbox`),
  };
}

/** "kafka is not enabled", "outbox and kafka are not enabled", "database, outbox and kafka are not enabled". */
export function notEnabled(plugins: readonly string[]): string {
  const named = plugins.length > 1 ? `${plugins.slice(0, -1).join(", ")} and ${plugins.at(-1)!}` : plugins.join("");
  return `${named} ${plugins.length === 1 ? "is" : "are"} not enabled`;
}
