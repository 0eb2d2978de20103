import { currentRequestId, currentTenantId, task } from "@jfast/runtime";

/** Runs in the worker with the tenant and request id of the request that enqueued it. */
export const charge = task("orders.charge", async (payload: { order_id: string }, { ctx }) => {
  ctx.logger?.info("order charged", { order_id: payload.order_id, tenant_id: currentTenantId(), request_id: currentRequestId() });
});
