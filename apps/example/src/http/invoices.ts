import { randomUUID } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { Job, currentTenantId, type Jfast } from "@jfast/runtime";
import { payInvoice } from "../../modules/invoice/pay.js";
import { emailsSent, invoices } from "../db/schema.js";

export function invoiceRoutes(jfast: Jfast) {
  const routes = new Hono();
  const database = () => jfast.require("database");
  const tenant = () => currentTenantId()!;

  routes.post("/", async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as { customer_email?: unknown; amount_cents?: unknown };
    if (typeof body.customer_email !== "string" || !Number.isInteger(body.amount_cents)) {
      return c.json({ error: 'body must be { "customer_email": string, "amount_cents": integer }' }, 400);
    }
    const [invoice] = await database()
      .db.insert(invoices)
      .values({ id: randomUUID(), tenantId: tenant(), customerEmail: body.customer_email, amountCents: body.amount_cents as number })
      .returning();
    return c.json(invoice, 201);
  });

  routes.get("/:id", async (c) => {
    const { db } = database();
    const [invoice] = await db.select().from(invoices).where(and(eq(invoices.id, c.req.param("id")), eq(invoices.tenantId, tenant())));
    if (!invoice) return c.json({ error: "no such invoice" }, 404);
    const emails = await db
      .select()
      .from(emailsSent)
      .where(and(eq(emailsSent.invoiceId, invoice.id), eq(emailsSent.tenantId, tenant())))
      .orderBy(asc(emailsSent.id));
    return c.json({ ...invoice, emails });
  });

  /**
   * Emails the invoice in the background. The job is written through the outbox inside this request's
   * transaction: it exists if and only if the transaction commits (here, if the invoice exists).
   */
  routes.post("/:id/send", async (c) => {
    const id = c.req.param("id");
    const result = await database().transaction(async (tx) => {
      const [invoice] = await tx.select({ id: invoices.id }).from(invoices).where(and(eq(invoices.id, id), eq(invoices.tenantId, tenant())));
      if (!invoice) return null;
      const job = new Job({ task: "invoice.send_email", payload: { invoice_id: id } });
      await jfast.require("outbox").enqueue(tx, job);
      return job;
    });
    if (!result) return c.json({ error: "no such invoice" }, 404);
    return c.json({ job_id: result.id, tenant_id: result.tenantId }, 202);
  });

  /**
   * Records the payment. The status change and the `invoice.paid` event commit together (modules/invoice/pay.ts):
   * billing emails a confirmation, and the shipping service hears it through Kafka and ships.
   */
  routes.post("/:id/pay", async (c) => {
    const outcome = await database().transaction((tx) => payInvoice(tx, jfast.require("outbox"), c.req.param("id")));
    if (!outcome.paid) {
      return outcome.reason === "not_found" ? c.json({ error: "no such invoice" }, 404) : c.json({ error: "the invoice is already paid" }, 409);
    }
    return c.json({ status: "paid", event_id: outcome.eventId, flow_id: outcome.flowId }, 202);
  });

  return routes;
}
