import { and, eq } from "drizzle-orm";
import { currentTenantId, Event, task } from "@jfast/runtime";
import { receipts } from "../../src/db/schema.js";
import { extractTotalCents } from "./extract-total.js";

export interface ExtractReceipt {
  receipt_id: string;
}

/**
 * Reads the total off a receipt, then publishes the fact that it is registered with its total. Whoever cares
 * subscribes (the alert module checks the budget); this module does not know them. The subscriber jobs are
 * written through the outbox in this task's own transaction, so they exist exactly when the extraction commits.
 */
export const extract = task<ExtractReceipt>("receipt.extract", { session: true }, async (payload, { session, ctx }) => {
  const [receipt] = await session
    .select()
    .from(receipts)
    .where(and(eq(receipts.id, payload.receipt_id), eq(receipts.tenantId, currentTenantId() ?? "")));
  if (!receipt) throw new Error(`receipt ${payload.receipt_id} not found`);

  const total = extractTotalCents(receipt.text);
  await session.update(receipts).set({ totalCents: total, status: "extracted" }).where(eq(receipts.id, receipt.id));
  // Built inside the running job: the event, and every subscriber's job, inherit its tenant and request id.
  await ctx.require("outbox").publish(
    session,
    "receipts",
    new Event({ type: "receipt.registered", data: { receipt_id: receipt.id, total_cents: total }, key: receipt.id }),
  );
});
