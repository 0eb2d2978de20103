import { Hono } from "hono";
import { currentTenantId, type Jfast } from "@jfast/runtime";

const MAX_LIMIT = 200;

/** Read-only: shipments are made by the shipment.create job when billing announces a payment. */
export function shipmentRoutes(jfast: Jfast) {
  const routes = new Hono();
  const store = () => jfast.require("shipments");

  /** The tenant's shipments, newest first; `?invoice_id=` narrows to one invoice's, `?limit=` (≤ 200, default 50). */
  routes.get("/", async (c) => {
    const tenantId = currentTenantId()!;
    const invoiceId = c.req.query("invoice_id");
    if (invoiceId) {
      const shipment = await store().forInvoice({ tenantId, invoiceId });
      return c.json(shipment ? [shipment] : []);
    }
    const limit = Number(c.req.query("limit") ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return c.json({ error: `limit must be a whole number from 1 to ${MAX_LIMIT}` }, 400);
    return c.json(await store().list({ tenantId, limit }));
  });

  return routes;
}
