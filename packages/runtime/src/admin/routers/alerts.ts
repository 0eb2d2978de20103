import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { Alerter } from "../../alerts/alerter.js";
import { alertRuleSchema, type AlertRule } from "../../alerts/config.js";
import { alertHistoryView, listAlertsView, NO_STORE, shownWebhook, type AlertEventView, type AlertsView } from "../alert-views.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import { operatorProcedure, router, viewerProcedure, type AdminContext } from "../trpc.js";

function alerterOf(ctx: AdminContext): Alerter {
  const alerter = ctx.sources.alerts?.() ?? null;
  if (!alerter) throw new TRPCError({ code: "PRECONDITION_FAILED", message: NO_STORE });
  return alerter;
}

const nameInput = z.strictObject({ name: z.string().min(1).max(100) });

async function change<T>(ctx: OperatorContext, action: string, name: string, filter: Record<string, unknown> | null, run: (alerter: Alerter) => Promise<T>): Promise<T> {
  const alerter = alerterOf(ctx);
  return auditedCall(ctx, { action, ids: [name], filter }, () => run(alerter), () => ({ done: true }));
}

function declared(alerter: Alerter, name: string): void {
  if (alerter.declared.some((r) => r.name === name)) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: `alert "${name}" is written in jfast.toml: change it there (jfast docs alerts#rules-at-run-time)` });
  }
}

/** A rule this service cannot evaluate (a kafka_lag rule without Kafka, or of a topic it does not consume). */
function evaluable(alerter: Alerter, rule: AlertRule): void {
  const refused = alerter.refusal(rule);
  if (refused) throw new TRPCError({ code: "BAD_REQUEST", message: `${refused} (jfast docs alerts#rules)` });
}

function shownRule(rule: AlertRule): Record<string, unknown> {
  return { ...rule, webhook: shownWebhook(rule.webhook) };
}

/** Alert rules, their state and history (docs/admin-api.md#alerts). */
export const alertsRouter = router({
  /** Every rule (jfast.toml's and the run-time ones) with where it stands. */
  list: viewerProcedure.query(({ ctx }): Promise<AlertsView> => listAlertsView(ctx.sources)),

  /** Changes of state, newest first, each with its delivery: pending, delivered, or failed with its last error. */
  history: viewerProcedure
    .input(z.strictObject({ name: z.string().min(1).max(100).optional(), limit: z.number().int().min(1).max(500).default(100) }).prefault({}))
    .query(({ ctx, input }): Promise<{ events: AlertEventView[] }> => alertHistoryView(ctx.sources, input)),

  /** Makes a rule at run time, checked as jfast.toml's are; every process's evaluator reads it on its next pass. */
  create: operatorProcedure.input(alertRuleSchema).mutation(async ({ ctx, input }) => {
    await change(ctx, "alerts.create", input.name, shownRule(input), async (alerter) => {
      declared(alerter, input.name);
      evaluable(alerter, input);
      if (!(await alerter.store.saveRule({ rule: input, create: true, by: ctx.principal.name }))) {
        throw new TRPCError({ code: "CONFLICT", message: `an alert named "${input.name}" exists: update it, or pick another name` });
      }
    });
    return { name: input.name, created: true as const };
  }),

  /** Replaces a run-time rule whole (the same fields as create). */
  update: operatorProcedure.input(alertRuleSchema).mutation(async ({ ctx, input }) => {
    await change(ctx, "alerts.update", input.name, shownRule(input), async (alerter) => {
      declared(alerter, input.name);
      evaluable(alerter, input);
      if (!(await alerter.store.saveRule({ rule: input, create: false, by: ctx.principal.name }))) {
        throw new TRPCError({ code: "NOT_FOUND", message: `no alert made at run time is named "${input.name}"` });
      }
    });
    return { name: input.name, updated: true as const };
  }),

  /** Deletes a run-time rule and where it stood; its history stays. */
  delete: operatorProcedure.input(nameInput).mutation(async ({ ctx, input }) => {
    await change(ctx, "alerts.delete", input.name, null, async (alerter) => {
      declared(alerter, input.name);
      if (!(await alerter.store.deleteRule({ name: input.name }))) throw new TRPCError({ code: "NOT_FOUND", message: `no alert made at run time is named "${input.name}"` });
      await alerter.store.forgetStatus({ name: input.name });
    });
    return { name: input.name, deleted: true as const };
  }),
});
