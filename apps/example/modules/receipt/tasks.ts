import { and, eq } from "drizzle-orm";
import { currentTenantId, Job, task, type Outbox } from "@jfast/runtime";
import { receipts } from "../../src/db/schema.js";
import { ALERT_THRESHOLD_CENTS, extractTotalCents } from "./extract-total.js";

export interface ExtractReceipt {
  receipt_id: string;
}

/**
 * Reads the total off a receipt. A large one raises an alert: that job is written through the outbox in
 * this task's own transaction, so it exists exactly when the extraction commits.
 */
export const extract = task<ExtractReceipt>("receipt.extract", { session: true }, async (payload, { session, ctx }) => {
  const [receipt] = await session
    .select()
    .from(receipts)
    .where(and(eq(receipts.id, payload.receipt_id), eq(receipts.tenantId, currentTenantId() ?? "")));
  if (!receipt) throw new Error(`receipt ${payload.receipt_id} not found`);

  const total = extractTotalCents(receipt.text);
  await session.update(receipts).set({ totalCents: total, status: "extracted" }).where(eq(receipts.id, receipt.id));
  if (total >= ALERT_THRESHOLD_CENTS) {
    // Built inside the running job: the alert inherits its tenant and request id.
    await ctx.require<Outbox>("outbox").enqueue(
      session,
      new Job({ task: "alert.notify", payload: { subject: `Large receipt ${receipt.id}`, total_cents: total } }),
    );
  }
});
