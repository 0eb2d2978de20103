import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { Job, currentTenantId, type Jfast, type QueueProvider } from "@jfast/runtime";

export function receiptRoutes(jfast: Jfast) {
  const routes = new Hono();

  /** Accepts a receipt's text; extraction (and an alert for large totals) happens in the background. */
  routes.post("/", async (c) => {
    if (!currentTenantId()) return c.json({ error: "send the x-tenant-id header" }, 400);
    const body = (await c.req.json().catch(() => ({}))) as { text?: unknown };
    if (typeof body.text !== "string") return c.json({ error: 'body must be { "text": string }' }, 400);
    const receiptId = randomUUID();
    const job = new Job({ task: "receipt.extract", payload: { receipt_id: receiptId, text: body.text } });
    await jfast.require<QueueProvider>("queue").enqueue(job);
    return c.json({ receipt_id: receiptId, job_id: job.id }, 202);
  });

  return routes;
}
