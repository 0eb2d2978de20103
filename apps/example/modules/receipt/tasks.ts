import { Job, task, type QueueProvider } from "@jfast/runtime";
import { ALERT_THRESHOLD_CENTS, extractTotalCents } from "./extract-total.js";

export interface ExtractReceipt {
  receipt_id: string;
  text: string;
}

export const extract = task<ExtractReceipt>("receipt.extract", async (payload, { ctx }) => {
  const total = extractTotalCents(payload.text);
  if (total >= ALERT_THRESHOLD_CENTS) {
    // Built inside the running job: the alert inherits its tenant and request id.
    await ctx.require<QueueProvider>("queue").enqueue(
      new Job({ task: "alert.notify", payload: { subject: `Large receipt ${payload.receipt_id}`, total_cents: total } }),
    );
  }
  return { total_cents: total };
});
