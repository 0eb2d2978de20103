import { currentTenantId, task } from "@jfast/runtime";
import { alerts } from "../../src/db/schema.js";
import type { Mailer } from "../../src/mailer.js";

export interface Notify {
  subject: string;
  total_cents: number;
}

export const FINANCE_TEAM = "finance@billing.example";

/** Records an alert and tells the finance team. Retried up to five times: a missed alert costs money. */
export const notify = task<Notify>("alert.notify", { session: true, maxAttempts: 5 }, async (payload, { session, ctx }) => {
  await session.insert(alerts).values({ tenantId: currentTenantId(), subject: payload.subject, totalCents: payload.total_cents });
  await ctx.require<Mailer>("mailer").send({
    to: FINANCE_TEAM,
    subject: payload.subject,
    body: `Total: ${(payload.total_cents / 100).toFixed(2)}`,
  });
});
