import { TRPCError } from "@trpc/server";
import type { FlowDetail, FlowStepInfo, FlowSummary } from "../core/backend/flows.js";
import type { FlowState } from "../core/flow.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import { badCursor } from "./cursors.js";
import { findFlow, flowsRefusal, namedQueues } from "./operations/flows.js";
import { backendCall } from "./queue-access.js";
import type { Redaction } from "./redact.js";
import type { AdminSources } from "./sources.js";

/** A step's error text is scrubbed of its own payload's hidden values: one job read per failed step, this many at most. */
const PAYLOAD_READS = 50;

export interface FlowListInput {
  state?: FlowState | undefined;
  name?: string | undefined;
  tenant?: string | undefined;
  /** Only this named queue (default: each in turn, `default` first). */
  queue?: string | undefined;
  limit: number;
  /** `nextCursor` of the previous page. */
  after?: string | undefined;
}

export interface FlowListView {
  enabled: boolean;
  /** False when no queue of the service keeps flows (RabbitMQ); `reason` says why. */
  supported: boolean;
  reason: string | null;
  items: (FlowSummary & { queue: string })[];
  /** Pass back as `after`; a page may be short while this is not null. */
  nextCursor: string | null;
}

export interface FlowStepView extends FlowStepInfo {
  /** The step's name, as in `after`. */
  name: string;
}

export interface FlowView extends FlowSummary {
  /** The named queue its steps run on. */
  queue: string;
  /** By step name, results and errors redacted as jobs.get redacts a job's. */
  steps: Record<string, FlowStepView>;
}

export interface FlowGetView {
  enabled: boolean;
  supported: boolean;
  reason: string | null;
  flow: FlowView | null;
}

/**
 * One page of flows (flows.list, `jfast flows list`): each named queue's, newest first, in turn. The cursor is
 * `<queue>:<that backend's cursor>` (`<queue>:` starts that queue), so a page never merges what it cannot continue.
 */
export async function listFlowsPage(sources: AdminSources, input: FlowListInput): Promise<FlowListView> {
  const queue = sources.queue();
  if (!queue) return { enabled: false, supported: false, reason: null, items: [], nextCursor: null };
  const refusal = flowsRefusal(queue);
  if (refusal) return { enabled: true, supported: false, reason: refusal.message.split("\n")[0]!, items: [], nextCursor: null };
  const queues = namedQueues(queue).filter((q) => q.backend.capabilities.flows && (input.queue === undefined || q.name === input.queue));
  if (input.queue !== undefined && queues.length === 0) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `no queue named "${input.queue}" that keeps flows; the service's queues are ${namedQueues(queue).map((q) => q.name).join(", ")}` });
  }
  const start = parseCursor(input.after, queues.map((q) => q.name));
  const items: FlowListView["items"] = [];
  const page = (nextCursor: string | null): FlowListView => ({ enabled: true, supported: true, reason: null, items, nextCursor });
  for (let i = start.index; i < queues.length; i++) {
    const named = queues[i]!;
    const rows = await backendCall(queue, "listing flows", () =>
      named.backend.listFlows({
        state: input.state,
        name: input.name,
        tenantId: input.tenant,
        limit: input.limit - items.length,
        after: i === start.index ? start.after : undefined,
      }),
    ).catch((error: unknown) => {
      if (causeCode(error) === "CURSOR_INVALID") throw badCursor("flows.list");
      throw error;
    });
    items.push(...rows.rows.map((row) => ({ ...row, queue: named.name })));
    if (rows.next !== null) return page(`${named.name}:${rows.next}`);
    if (items.length >= input.limit) return page(queues[i + 1] ? `${queues[i + 1]!.name}:` : null);
  }
  return page(null);
}

/** One flow with every step (flows.get, `jfast flows show`); `flow: null` when no queue holds it. */
export async function getFlowView(sources: AdminSources, id: string): Promise<FlowGetView> {
  const queue = sources.queue();
  if (!queue) return { enabled: false, supported: false, reason: null, flow: null };
  const refusal = flowsRefusal(queue);
  if (refusal) return { enabled: true, supported: false, reason: refusal.message.split("\n")[0]!, flow: null };
  const found = await findFlow(queue, id);
  if (!found) return { enabled: true, supported: true, reason: null, flow: null };
  return { enabled: true, supported: true, reason: null, flow: await flowView(queue, found, sources.redaction) };
}

/** The flow as shown: results redacted as payloads are, error text scrubbed of the step's hidden payload values. */
async function flowView(queue: QueueProvider, found: { queue: string; flow: FlowDetail }, redaction: Redaction): Promise<FlowView> {
  const backend = namedQueues(queue).find((q) => q.name === found.queue)!.backend;
  const steps: Record<string, FlowStepView> = {};
  let reads = 0;
  for (const [name, step] of Object.entries(found.flow.steps)) {
    const { result, error, ...rest } = step;
    const view: FlowStepView = { name, ...rest };
    if ("result" in step) view.result = redaction.payload(result);
    if (error) {
      let values: string[] = [];
      if (reads < PAYLOAD_READS) {
        reads += 1;
        const info = await backend.getJob({ id: step.jobId }).catch(() => null);
        values = info ? redaction.values(info.job.payload) : [];
      }
      view.error = { class: redaction.text(error.class, values), message: redaction.text(error.message, values) };
    }
    // A step may be named "__proto__": kept as an own property.
    Object.defineProperty(steps, name, { value: view, enumerable: true, writable: true, configurable: true });
  }
  return { ...found.flow, queue: found.queue, steps };
}

function parseCursor(after: string | undefined, names: string[]): { index: number; after: string | undefined } {
  if (after === undefined) return { index: 0, after: undefined };
  const colon = after.indexOf(":");
  const index = colon < 0 ? -1 : names.indexOf(after.slice(0, colon));
  if (index < 0) throw badCursor("flows.list");
  const rest = after.slice(colon + 1);
  return { index, after: rest === "" ? undefined : rest };
}

function causeCode(error: unknown): unknown {
  return ((error as { cause?: { code?: unknown } }).cause ?? (error as { code?: unknown }))?.code;
}
