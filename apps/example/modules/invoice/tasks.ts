import { currentTenantId, task } from "@jfast/runtime";
import type { Mailer } from "../../src/mailer.js";

export interface SendInvoiceEmail {
  invoice_id: string;
  to: string;
  amount_cents: number;
}

/** Emails an invoice to its customer. Runs for the tenant of the request that enqueued it. */
export const sendEmail = task<SendInvoiceEmail>("invoice.send_email", async (payload, { ctx, job }) => {
  const mailer = ctx.require<Mailer>("mailer");
  await mailer.send({
    to: payload.to,
    subject: `Invoice ${payload.invoice_id}`,
    body: `Amount due: ${(payload.amount_cents / 100).toFixed(2)} (tenant ${currentTenantId() ?? "-"}, job ${job.id})`,
  });
});
