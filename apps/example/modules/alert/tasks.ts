import { currentTenantId, subscribe, task, type AppContext, type TaskSession } from "@jfast/runtime";
import { alerts } from "../../src/db/schema.js";

export interface Notify {
  subject: string;
  total_cents: number;
}

export const FINANCE_TEAM = "finance@billing.example";

/** Receipts at or above this total raise an alert for the finance team. */
export const ALERT_THRESHOLD_CENTS = 100_000;

/** Records an alert and tells the finance team. Retried up to five times: a missed alert costs money. */
export const notify = task<Notify>("alert.notify", { session: true, maxAttempts: 5 }, async (payload, { session, ctx }) => {
  await raiseAlert(session, ctx, payload);
});

/**
 * Every registered receipt; a large one raises an alert. With a session, the event id is claimed in the inbox
 * in the same transaction as the alert row: a redelivered event raises no second alert.
 */
export const checkBudget = subscribe("receipt.registered", { session: true, maxAttempts: 5 }, async (event, { session, ctx }) => {
  const { receipt_id, total_cents } = event.data as { receipt_id: string; total_cents: number };
  if (total_cents < ALERT_THRESHOLD_CENTS) return;
  await raiseAlert(session, ctx, { subject: `Large receipt ${receipt_id}`, total_cents });
});

/** `session` is the handler's drizzle transaction: the alert row commits with the job's other work. */
async function raiseAlert(session: TaskSession, ctx: AppContext, alert: Notify): Promise<void> {
  await session.insert(alerts).values({ tenantId: currentTenantId(), subject: alert.subject, totalCents: alert.total_cents });
  await ctx.require("mailer").send({
    to: FINANCE_TEAM,
    subject: alert.subject,
    body: `Total: ${(alert.total_cents / 100).toFixed(2)}`,
  });
}
