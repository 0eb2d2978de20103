import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { FlowDetail, FlowStepInfo, FlowSummary } from "../../core/backend/flows.js";
import { FlowState } from "../../core/flow.js";
import type { QueueProvider } from "../../queue/queue-provider.js";
import { badCursor } from "../cursors.js";
import { cancelFlow, findFlow, flowsRefusal, namedQueues, retryFlowStep } from "../operations/flows.js";
import { backendCall } from "../queue-access.js";
import { queueInput } from "../queue-scope.js";
import type { Redaction } from "../redact.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";

const text = z.string().min(1).max(200);
/** A step's error text is scrubbed of its own payload's hidden values: one job read per failed step, this many at most. */
const PAYLOAD_READS = 50;

const listInput = z
  .strictObject({
    state: z.enum([FlowState.running, FlowState.completed, FlowState.failed, FlowState.cancelled]).optional(),
    name: text.optional(),
    tenant: text.optional(),
    /** Only this named queue (default: each in turn, `default` first). */
    queue: queueInput,
    limit: z.number().int().min(1).max(100).default(50),
    /** `nextCursor` of the previous page. */
    after: z.string().min(1).max(300).optional(),
  })
  .prefault({});

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

export const flowsRouter = router({
  /** Flows newest first (per named queue), by state, name or tenant, a bounded page (docs/admin-api.md#operating-flows). */
  list: viewerProcedure.input(listInput).query(async ({ ctx, input }): Promise<FlowListView> => {
    const queue = ctx.sources.queue();
    if (!queue) return { enabled: false, supported: false, reason: null, items: [], nextCursor: null };
    const refusal = flowsRefusal(queue);
    if (refusal) return { enabled: true, supported: false, reason: refusal.message.split("\n")[0]!, items: [], nextCursor: null };
    const queues = namedQueues(queue).filter((q) => q.backend.capabilities.flows && (input.queue === undefined || q.name === input.queue));
    if (input.queue !== undefined && queues.length === 0) {
      throw new TRPCError({ code: "BAD_REQUEST", message: `no queue named "${input.queue}" that keeps flows; the service's queues are ${namedQueues(queue).map((q) => q.name).join(", ")}` });
    }
    const start = parseCursor(input.after, queues.map((q) => q.name));
    const items: FlowListView["items"] = [];
    for (let i = start.index; i < queues.length; i++) {
      const named = queues[i]!;
      const page = await backendCall(queue, "listing flows", () =>
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
      items.push(...page.rows.map((row) => ({ ...row, queue: named.name })));
      if (page.next !== null) return { enabled: true, supported: true, reason: null, items, nextCursor: `${named.name}:${page.next}` };
      if (items.length >= input.limit) {
        const following = queues[i + 1];
        return { enabled: true, supported: true, reason: null, items, nextCursor: following ? `${following.name}:` : null };
      }
    }
    return { enabled: true, supported: true, reason: null, items, nextCursor: null };
  }),

  /** One flow with every step: state, job id, task, after, attempts, result or error (redacted). */
  get: viewerProcedure.input(z.strictObject({ id: text })).query(async ({ ctx, input }): Promise<FlowGetView> => {
    const queue = ctx.sources.queue();
    if (!queue) return { enabled: false, supported: false, reason: null, flow: null };
    const refusal = flowsRefusal(queue);
    if (refusal) return { enabled: true, supported: false, reason: refusal.message.split("\n")[0]!, flow: null };
    const found = await findFlow(queue, input.id);
    if (!found) return { enabled: true, supported: true, reason: null, flow: null };
    return { enabled: true, supported: true, reason: null, flow: await flowView(queue, found, ctx.sources.redaction) };
  }),

  /** Cancels every step not yet finished; a running one sees its signal aborted. Audited (`flows.cancel`). */
  cancel: operatorProcedure.input(z.strictObject({ id: text })).mutation(async ({ ctx, input }) => {
    const result = await cancelFlow(ctx, input.id);
    if (!result) throw new TRPCError({ code: "NOT_FOUND", message: `no flow with id ${input.id}` });
    return { id: input.id, ...result };
  }),

  /** Retries a dead step (its job's dead-letter retry), which resumes the flow. Audited (`flows.retryStep`). */
  retryStep: operatorProcedure.input(z.strictObject({ id: text, step: text })).mutation(async ({ ctx, input }) => {
    const result = await retryFlowStep(ctx, input);
    return { id: input.id, step: input.step, ...result };
  }),
});

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
    Object.defineProperty(steps, name, { value: view, enumerable: true, writable: true, configurable: true });
  }
  return { ...found.flow, queue: found.queue, steps };
}

/** `<queue>:<backend cursor>` continues that queue's listing; `<queue>:` starts it. */
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
