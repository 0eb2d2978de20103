import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { Job, currentTenantId, type Jfast } from "@jfast/runtime";
import { alerts, receipts } from "../db/schema.js";

export function receiptRoutes(jfast: Jfast) {
  const routes = new Hono();
  const database = () => jfast.require("database");

  /** Stores a receipt's text; extraction (and an alert for large totals) happens in the background. */
  routes.post("/", async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as { text?: unknown };
    if (typeof body.text !== "string") return c.json({ error: 'body must be { "text": string }' }, 400);
    const text = body.text;
    const receipt = await database().transaction(async (tx) => {
      const [row] = await tx.insert(receipts).values({ id: randomUUID(), tenantId: currentTenantId()!, text }).returning();
      const job = new Job({ task: "receipt.extract", payload: { receipt_id: row!.id } });
      await jfast.require("outbox").enqueue(tx, job);
      return { ...row!, job_id: job.id };
    });
    return c.json(receipt, 202);
  });

  routes.get("/:id", async (c) => {
    const [receipt] = await database()
      .db.select()
      .from(receipts)
      .where(and(eq(receipts.id, c.req.param("id")), eq(receipts.tenantId, currentTenantId()!)));
    return receipt ? c.json(receipt) : c.json({ error: "no such receipt" }, 404);
  });

  return routes;
}

export function alertRoutes(jfast: Jfast) {
  const routes = new Hono();
  routes.get("/", async (c) => {
    const rows = await jfast
      .require("database")
      .db.select()
      .from(alerts)
      .where(eq(alerts.tenantId, currentTenantId()!));
    return c.json(rows);
  });
  return routes;
}
