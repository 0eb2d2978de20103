import type { AdminContext } from "./trpc.js";
import type { AdminPrincipal } from "./tokens.js";

export type OperatorContext = AdminContext & { principal: AdminPrincipal };

export interface AuditDraft {
  action: string;
  ids: string[];
  filter: Record<string, unknown> | null;
}

/** Writes one audit entry for a mutation, naming the calling token. */
export async function recordAudit(ctx: OperatorContext, entry: AuditDraft & { outcome: Record<string, unknown> }): Promise<void> {
  await ctx.sources.audit.record({
    actor: ctx.principal.name,
    role: ctx.principal.role,
    action: entry.action,
    ids: entry.ids,
    count: entry.ids.length,
    filter: entry.filter,
    outcome: entry.outcome,
  });
}

/** Runs a mutation and audits its outcome; when it fails, the attempt is audited with the error, then rethrown. */
export async function auditedCall<T>(ctx: OperatorContext, entry: AuditDraft, run: () => Promise<T>, outcome: (result: T) => Record<string, unknown>): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await recordAudit(ctx, { ...entry, outcome: { error: (error as Error).message } }).catch(() => undefined);
    throw error;
  }
  await recordAudit(ctx, { ...entry, outcome: outcome(result) });
  return result;
}
