import { task } from "@jfast/runtime";
import type { Mailer } from "../../src/mailer.js";

export interface Notify {
  subject: string;
  total_cents: number;
}

export const FINANCE_TEAM = "finance@billing.example";

/** Tells the finance team about something that needs a human. */
export const notify = task<Notify>("alert.notify", { maxAttempts: 5 }, async (payload, { ctx }) => {
  await ctx.require<Mailer>("mailer").send({
    to: FINANCE_TEAM,
    subject: payload.subject,
    body: `Total: ${(payload.total_cents / 100).toFixed(2)}`,
  });
});
