import { and, eq } from "drizzle-orm";
import { Event, currentTenantId, type Outbox } from "@jfast/runtime";
import { invoices } from "../../src/db/schema.js";
import { fulfilOrder, type FulfilOrder } from "../fulfilment/tasks.js";

/** The Kafka topic of billing's facts about invoices; the shipping service listens to it. */
export const INVOICES_TOPIC = "invoices";

/** The data of an `invoice.paid` event: what a listener needs without calling billing back. */
export interface InvoicePaid {
  invoice_id: string;
  amount_cents: number;
  customer_email: string;
  paid_at: string;
}

export type PayOutcome = { paid: true; eventId: string; flowId: string } | { paid: false; reason: "not_found" | "already_paid" };

/**
 * Marks an invoice paid and announces it, in the caller's transaction: the status change and the event
 * commit together or not at all. `outbox.publish` writes a job for each billing subscriber of
 * `invoice.paid` (the payment confirmation) and, with the kafka plugin on, an outbox row the relay produces
 * to Kafka's "invoices" topic for other services. The key is the invoice id, so one invoice's events stay
 * in order. The order's fulfilment flow (charge and reserve, then ship, then the tracking email: modules/fulfilment)
 * is written in the same transaction, so a payment that rolls back starts nothing.
 */
export async function payInvoice(tx: any, outbox: Outbox, invoiceId: string): Promise<PayOutcome> {
  const [invoice] = await tx
    .select()
    .from(invoices)
    .where(and(eq(invoices.id, invoiceId), eq(invoices.tenantId, currentTenantId() ?? "")))
    .for("update");
  if (!invoice) return { paid: false, reason: "not_found" };
  if (invoice.paidAt) return { paid: false, reason: "already_paid" };
  const paidAt = new Date();
  await tx.update(invoices).set({ status: "paid", paidAt }).where(eq(invoices.id, invoice.id));
  const data: InvoicePaid = { invoice_id: invoice.id, amount_cents: invoice.amountCents, customer_email: invoice.customerEmail, paid_at: paidAt.toISOString() };
  const event = new Event({ type: "invoice.paid", data, key: invoice.id });
  await outbox.publish(tx, INVOICES_TOPIC, event);
  const order: FulfilOrder = { invoice_id: invoice.id, amount_cents: invoice.amountCents, customer_email: invoice.customerEmail };
  const { flowId } = await outbox.flow(tx, fulfilOrder.create({ charge: order, reserve: order, ship: order, notify: order }));
  return { paid: true, eventId: event.id, flowId };
}
