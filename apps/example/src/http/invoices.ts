import { Hono } from "hono";
import { Job, currentTenantId, type Jfast, type QueueProvider } from "@jfast/runtime";

export function invoiceRoutes(jfast: Jfast) {
  const routes = new Hono();

  /** Emails the invoice to its customer in the background; answers at once with the job id. */
  routes.post("/:id/send", async (c) => {
    if (!currentTenantId()) return c.json({ error: "send the x-tenant-id header" }, 400);
    const body = (await c.req.json().catch(() => ({}))) as { to?: unknown; amount_cents?: unknown };
    if (typeof body.to !== "string" || typeof body.amount_cents !== "number") {
      return c.json({ error: 'body must be { "to": string, "amount_cents": number }' }, 400);
    }
    const job = new Job({
      task: "invoice.send_email",
      payload: { invoice_id: c.req.param("id"), to: body.to, amount_cents: body.amount_cents },
    });
    await jfast.require<QueueProvider>("queue").enqueue(job);
    return c.json({ job_id: job.id, tenant_id: job.tenantId }, 202);
  });

  return routes;
}
