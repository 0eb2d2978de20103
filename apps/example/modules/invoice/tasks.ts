import { and, eq } from "drizzle-orm";
import { currentTenantId, task } from "@jfast/runtime";
import { emailsSent, invoices } from "../../src/db/schema.js";
import type { Mailer } from "../../src/mailer.js";

export interface SendInvoiceEmail {
  invoice_id: string;
}

export class InvoiceNotFound extends Error {
  override name = "InvoiceNotFound";
}

/**
 * Emails an invoice to its customer, once. Runs in a TaskSession (a transaction for the job's tenant): the
 * `emails_sent` row, the status change and the inbox claim on the invoice id commit together, so a
 * redelivered job finds the claim and is skipped instead of emailing twice.
 */
export const sendEmail = task<SendInvoiceEmail>(
  "invoice.send_email",
  { session: true, idempotentOn: (p) => p.invoice_id },
  async (payload, { session, ctx, job }) => {
    // The tenant of the request that enqueued the job, restored by the worker.
    const tenantId = currentTenantId();
    const [invoice] = await session
      .select()
      .from(invoices)
      .where(and(eq(invoices.id, payload.invoice_id), eq(invoices.tenantId, tenantId ?? "")));
    if (!invoice) throw new InvoiceNotFound(`invoice ${payload.invoice_id} does not exist for tenant ${tenantId}`);

    await ctx.require<Mailer>("mailer").send({
      to: invoice.customerEmail,
      subject: `Invoice ${invoice.id}`,
      body: `Amount due: ${(invoice.amountCents / 100).toFixed(2)}`,
    });
    await session.insert(emailsSent).values({
      tenantId,
      invoiceId: invoice.id,
      recipient: invoice.customerEmail,
      jobId: job.id,
      attempt: job.attempts,
    });
    await session.update(invoices).set({ status: "sent" }).where(eq(invoices.id, invoice.id));
  },
);
