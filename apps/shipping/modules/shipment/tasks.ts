import { currentTenantId, Event, Job, on, task } from "@jfast/runtime";
import { bookCarrier } from "./carrier.js";

/** Billing's topic (apps/example) and what its `invoice.paid` event carries; services share no code, only this shape. */
export const INVOICES_TOPIC = "invoices";
export interface InvoicePaid {
  invoice_id: string;
  amount_cents: number;
  customer_email: string;
  paid_at: string;
}

/** Shipping's own topic; billing listens to it. */
export const SHIPMENTS_TOPIC = "shipments";

/**
 * Billing says an invoice is paid: queue the shipment. The handler only enqueues, so a slow carrier never
 * holds up the partition, and a failing booking is retried with backoff and ends as a dead letter that the
 * dashboard shows, rather than blocking every invoice behind it. The job id comes from the event id: a
 * redelivered event finds the job already there and adds nothing. The job inherits the event's tenant,
 * request id and trace, restored around this handler.
 */
export const scheduleShipment = on(INVOICES_TOPIC, async (event, { ctx }) => {
  if (event.type !== "invoice.paid") return;
  await ctx.require("queue").enqueue(new Job({ id: `ship-${event.id}`, task: "shipment.create", payload: event.data as InvoicePaid }));
});

/**
 * Books the carrier, stores the shipment (one per invoice), then tells billing. If the publish fails, the job
 * is retried: the store hands back the shipment already made, and the event goes out again, with the same
 * data (Kafka delivery is at-least-once; billing's handler is idempotent).
 */
export const create = task<InvoicePaid>("shipment.create", async (paid, { ctx }) => {
  const { carrier, trackingCode } = bookCarrier(paid.amount_cents);
  const { shipment } = await ctx.require("shipments").createForInvoice({
    id: `shp-${paid.invoice_id}`,
    invoiceId: paid.invoice_id,
    tenantId: currentTenantId(),
    customerEmail: paid.customer_email,
    amountCents: paid.amount_cents,
    carrier,
    trackingCode,
  });
  await ctx.require("events").publish(
    SHIPMENTS_TOPIC,
    new Event({
      type: "shipment.created",
      data: { shipment_id: shipment.id, invoice_id: shipment.invoiceId, carrier: shipment.carrier, tracking_code: shipment.trackingCode },
      key: shipment.invoiceId,
    }),
  );
});
