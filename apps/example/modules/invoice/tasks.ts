import { and, eq, lt } from "drizzle-orm";
import { currentTenantId, on, subscribe, task } from "@jfast/runtime";
import { emailsSent, invoices } from "../../src/db/schema.js";
import type { InvoicePaid } from "./pay.js";

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

    await ctx.require("mailer").send({
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

/**
 * Thanks the customer once an invoice is paid. A local subscriber of billing's own `invoice.paid`: the
 * outbox writes its job in the paying request's transaction, with or without Kafka. With a session, the
 * event id is claimed in the inbox with the emails_sent row, so a redelivered job sends no second email.
 */
export const confirmPayment = subscribe("invoice.paid", { session: true }, async (event, { session, ctx, job }) => {
  const paid = event.data as InvoicePaid;
  await ctx.require("mailer").send({
    to: paid.customer_email,
    subject: `Payment received for invoice ${paid.invoice_id}`,
    body: `Received: ${(paid.amount_cents / 100).toFixed(2)}`,
  });
  await session.insert(emailsSent).values({
    tenantId: currentTenantId(),
    invoiceId: paid.invoice_id,
    recipient: paid.customer_email,
    jobId: job.id,
    attempt: job.attempts,
  });
});

/** What the shipping service announces on its "shipments" topic (apps/shipping). */
export interface ShipmentCreated {
  shipment_id: string;
  invoice_id: string;
  tracking_code: string;
}

/**
 * The shipping service created the shipment for a paid invoice: billing records it on the invoice. Runs
 * with the tenant of the request that paid (it travels in the events). Setting the same values twice is
 * harmless, which is what makes Kafka's at-least-once delivery safe here.
 */
export const recordShipment = on("shipments", async (event, { ctx }) => {
  if (event.type !== "shipment.created") return;
  const shipment = event.data as ShipmentCreated;
  const updated = await ctx
    .require("database")
    .db.update(invoices)
    .set({ shipmentId: shipment.shipment_id, trackingCode: shipment.tracking_code })
    .where(and(eq(invoices.id, shipment.invoice_id), eq(invoices.tenantId, currentTenantId() ?? "")))
    .returning({ id: invoices.id });
  if (updated.length === 0) {
    ctx.logger?.warn("shipment.created names an invoice billing does not have for this tenant; ignored", {
      invoice_id: shipment.invoice_id,
      shipment_id: shipment.shipment_id,
      tenant_id: currentTenantId(),
    });
  }
});

/** A draft nobody sent within a day is expired, every minute: the Schedules page shows this one's next ticks. */
export const DRAFT_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const expireDrafts = task("invoice.expire_drafts", { cron: "* * * * *" }, async (_payload: { scheduled_for: string }, { ctx }) => {
  const expired = await ctx
    .require("database")
    .db.update(invoices)
    .set({ status: "expired" })
    .where(and(eq(invoices.status, "draft"), lt(invoices.createdAt, new Date(Date.now() - DRAFT_LIFETIME_MS))))
    .returning({ id: invoices.id });
  if (expired.length > 0) ctx.logger?.info("expired draft invoices", { count: expired.length });
});

/**
 * Every morning at nine in Madrid, whatever the season: a reminder for each invoice sent more than two weeks ago
 * and still unpaid. A system job, so it reads every tenant's invoices; each reminder names its invoice.
 */
export const OVERDUE_AFTER_MS = 14 * 24 * 60 * 60 * 1000;
export const remindOverdue = task(
  "invoice.remind_overdue",
  { cron: "0 9 * * *", timezone: "Europe/Madrid" },
  async (_payload: { scheduled_for: string }, { ctx }) => {
    const overdue = await ctx
      .require("database")
      .db.select()
      .from(invoices)
      .where(and(eq(invoices.status, "sent"), lt(invoices.createdAt, new Date(Date.now() - OVERDUE_AFTER_MS))));
    for (const invoice of overdue) {
      await ctx.require("mailer").send({
        to: invoice.customerEmail,
        subject: `Reminder: invoice ${invoice.id} is overdue`,
        body: `Amount due: ${(invoice.amountCents / 100).toFixed(2)}`,
      });
    }
  },
);
