import { integer, pgTable, serial, text, timestamp } from "drizzle-orm/pg-core";

// The billing service's own tables. Every row carries its tenant; queries filter on it explicitly
// (a service that turns on [plugin.database] rls would add policies instead).

export const invoices = pgTable("invoices", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  customerEmail: text("customer_email").notNull(),
  amountCents: integer("amount_cents").notNull(),
  status: text("status").notNull().default("draft"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  paidAt: timestamp("paid_at", { withTimezone: true }),
  /** Set when the shipping service announces the shipment for this invoice (shipment.created on Kafka). */
  shipmentId: text("shipment_id"),
  trackingCode: text("tracking_code"),
});

/** One row per invoice email actually sent, written in the same transaction as the task's other work. */
export const emailsSent = pgTable("emails_sent", {
  id: serial("id").primaryKey(),
  tenantId: text("tenant_id"),
  invoiceId: text("invoice_id").notNull(),
  recipient: text("recipient").notNull(),
  jobId: text("job_id").notNull(),
  attempt: integer("attempt").notNull(),
  sentAt: timestamp("sent_at", { withTimezone: true }).notNull().defaultNow(),
});

export const receipts = pgTable("receipts", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  text: text("text").notNull(),
  totalCents: integer("total_cents"),
  status: text("status").notNull().default("pending"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const alerts = pgTable("alerts", {
  id: serial("id").primaryKey(),
  tenantId: text("tenant_id"),
  subject: text("subject").notNull(),
  totalCents: integer("total_cents").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
