import { defineFlow, task } from "@jfast/runtime";

/** What each step of an order's fulfilment needs: the paid invoice, as its `invoice.paid` event carried it. */
export interface FulfilOrder {
  invoice_id: string;
  amount_cents: number;
  customer_email: string;
}

/**
 * Captures the payment the customer authorised. A stand-in for the payment provider's call: its result (the
 * capture) is stored with the job and handed to the steps after it (docs/flows.md#results-passed-on).
 */
export const chargeCard = task("fulfilment.charge_card", async (order: FulfilOrder) => ({
  capture_id: `cap_${order.invoice_id}`,
  amount_cents: order.amount_cents,
}));

/** Holds the ordered items in the warehouse; runs beside chargeCard. */
export const reserveStock = task("fulfilment.reserve_stock", async (order: FulfilOrder) => ({
  reservation_id: `res_${order.invoice_id}`,
}));

/** Books the courier once the payment is captured and the stock held, reading both steps' results. */
export const bookShipment = task("fulfilment.book_shipment", async (order: FulfilOrder, tools): Promise<{ tracking_id: string }> => {
  const { charge, reserve } = fulfilOrder.results(tools, "ship");
  return { tracking_id: `trk_${reserve.reservation_id}_${charge.capture_id}` };
});

/** Tells the customer their order is on its way, with the tracking id the shipment step returned. */
export const sendTracking = task("fulfilment.send_tracking", async (order: FulfilOrder, tools): Promise<void> => {
  const { ship } = fulfilOrder.results(tools, "notify");
  await tools.ctx.require("mailer").send({
    to: order.customer_email,
    subject: `Your order for invoice ${order.invoice_id} is on its way`,
    body: `Tracking: ${ship.tracking_id}`,
  });
});

/**
 * A paid invoice's fulfilment (docs/flows.md): charge and reserve side by side, then ship, then tell the
 * customer. Started by payInvoice in the paying request's transaction (modules/invoice/pay.ts).
 */
export const fulfilOrder = defineFlow("fulfilment.order", {
  charge: { task: chargeCard },
  reserve: { task: reserveStock },
  ship: { task: bookShipment, after: ["charge", "reserve"] },
  notify: { task: sendTracking, after: ["ship"] },
});
