import { TRPCError } from "@trpc/server";
import type { AdminContext } from "./trpc.js";
import type { AdminPrincipal } from "./tokens.js";
import type { AuditTicket } from "./audit.js";

export type OperatorContext = AdminContext & { principal: AdminPrincipal };

export interface AuditDraft {
  action: string;
  ids: string[];
  filter: Record<string, unknown> | null;
}

/** Writes one finished audit entry, naming the calling token (a background replay's end). */
export async function recordAudit(ctx: OperatorContext, entry: AuditDraft & { outcome: Record<string, unknown> }): Promise<void> {
  await ctx.sources.audit.record({ ...entryOf(ctx, entry), outcome: entry.outcome });
}

/**
 * Runs a mutation between its audit entry and that entry's outcome. The entry is written first: when it cannot
 * be, the action is refused and nothing changes. A failed action is finished with its error and rethrown. An
 * outcome that cannot be written after the action succeeded leaves the entry pending (it says the action was
 * started, by whom) and is logged; the caller gets the action's answer.
 */
export async function auditedCall<T>(
  ctx: OperatorContext,
  entry: AuditDraft,
  run: () => Promise<T>,
  outcome: (result: T) => Record<string, unknown>,
  ids?: (result: T) => string[],
): Promise<T> {
  const ticket = await begin(ctx, entry);
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await finish(ctx, ticket, { outcome: { error: (error as Error).message } });
    throw error;
  }
  await finish(ctx, ticket, { outcome: outcome(result), ids: ids?.(result) });
  return result;
}

async function begin(ctx: OperatorContext, entry: AuditDraft): Promise<AuditTicket> {
  try {
    return await ctx.sources.audit.begin(entryOf(ctx, entry));
  } catch (error) {
    ctx.sources.logger.error("admin action refused: its audit entry could not be written", { action: entry.action, actor: ctx.principal.name, error });
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: `${entry.action} was not done: its audit entry could not be written (${(error as Error).message}); fix the audit store (the ${ctx.sources.audit.kind === "sql" ? "jfast_admin_audit table" : "log"}) and try again`,
      cause: error,
    });
  }
}

async function finish(ctx: OperatorContext, ticket: AuditTicket, params: { outcome: Record<string, unknown>; ids?: string[] | undefined }): Promise<void> {
  await ticket.finish(params).catch((error: unknown) =>
    ctx.sources.logger.error("an admin action's outcome could not be written; its audit entry stays pending", { auditId: ticket.entry.id, action: ticket.entry.action, outcome: params.outcome, error }),
  );
}

function entryOf(ctx: OperatorContext, entry: AuditDraft) {
  return { actor: ctx.principal.name, role: ctx.principal.actorRole ?? ctx.principal.role, via: ctx.principal.via ?? null, action: entry.action, ids: entry.ids, count: entry.ids.length, filter: entry.filter };
}
