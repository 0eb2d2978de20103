import { TRPCError } from "@trpc/server";
import type { Outbox } from "../../outbox/outbox.js";
import { auditedCall, type OperatorContext } from "../audit-call.js";
import type { AdminSources } from "../sources.js";

/** The dead outbox rows named, or every one (`jfast outbox retry --all`). */
export type OutboxSelection = { ids: string[] } | { all: true };

/**
 * Gives dead outbox rows back to the relay with their attempts reset (docs/outbox.md#dead-rows): the admin API's
 * outbox.retry and `jfast outbox retry`, one audit entry (`outbox.retry`) per call.
 */
export function retryOutboxRows(ctx: OperatorContext, params: OutboxSelection): Promise<{ retried: string[]; missing: string[] }> {
  const outbox = requireOutbox(ctx.sources);
  const all = "all" in params;
  return auditedCall(
    ctx,
    { action: "outbox.retry", ids: all ? [] : params.ids, filter: all ? { all: true } : null },
    () => outboxCall("retrying dead outbox rows", () => outbox.retryDead(params)),
    (result) => ({ retried: result.retried.length, missing: result.missing.length }),
    // `all` names no ids up front: the entry records the ones retried.
    all ? (result) => result.retried : undefined,
  );
}

/** Deletes dead outbox rows for good: the admin API's outbox.discard and `jfast outbox discard`. */
export function discardOutboxRows(ctx: OperatorContext, params: OutboxSelection): Promise<{ discarded: string[]; missing: string[] }> {
  const outbox = requireOutbox(ctx.sources);
  const all = "all" in params;
  return auditedCall(
    ctx,
    { action: "outbox.discard", ids: all ? [] : params.ids, filter: all ? { all: true } : null },
    () => outboxCall("discarding dead outbox rows", () => outbox.discardDead(params)),
    (result) => ({ discarded: result.discarded.length, missing: result.missing.length }),
    all ? (result) => result.discarded : undefined,
  );
}

export function requireOutbox(sources: AdminSources): Outbox {
  const outbox = sources.outbox();
  if (!outbox) throw new TRPCError({ code: "PRECONDITION_FAILED", message: `the service "${sources.service.name}" does not enable the outbox plugin` });
  return outbox;
}

export async function outboxCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `${what} failed in the outbox's database: ${(error as Error).message}`, cause: error });
  }
}
