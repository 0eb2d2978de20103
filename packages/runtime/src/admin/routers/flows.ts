import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { FlowState } from "../../core/flow.js";
import { getFlowView, listFlowsPage, type FlowGetView, type FlowListView } from "../flow-views.js";
import { cancelFlow, retryFlowStep } from "../operations/flows.js";
import { queueInput } from "../queue-scope.js";
import { operatorProcedure, router, viewerProcedure } from "../trpc.js";

const text = z.string().min(1).max(200);

const listInput = z
  .strictObject({
    state: z.enum([FlowState.running, FlowState.completed, FlowState.failed, FlowState.cancelled]).optional(),
    name: text.optional(),
    tenant: text.optional(),
    queue: queueInput,
    limit: z.number().int().min(1).max(100).default(50),
    after: z.string().min(1).max(300).optional(),
  })
  .prefault({});

/** Flows and their steps (docs/admin-api.md#operating-flows). */
export const flowsRouter = router({
  /** Flows newest first (each named queue in turn), by state, name or tenant; a bounded page. */
  list: viewerProcedure.input(listInput).query(({ ctx, input }): Promise<FlowListView> => listFlowsPage(ctx.sources, input)),

  /** One flow with every step: state, job id, task, after, attempts, result or error (redacted). */
  get: viewerProcedure.input(z.strictObject({ id: text })).query(({ ctx, input }): Promise<FlowGetView> => getFlowView(ctx.sources, input.id)),

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
