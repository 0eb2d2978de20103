import { TRPCError } from "@trpc/server";
import type { AdminPrincipal } from "./tokens.js";

/**
 * What a person with the operator role in a dashboard may act on per call: one dead letter or outbox row at a
 * time (docs/dashboard.md#users). The service enforces it itself: a call forged through the dashboard is refused
 * here too. Admins, and tokens used by scripts, name up to MAX_IDS_PER_CALL.
 */
export const OPERATOR_IDS_PER_CALL = 1;
export const MAX_IDS_PER_CALL = 1000;

/** True for a person a dashboard forwards with the operator role (not an admin, not a token acting as itself). */
function isDashboardOperator(principal: AdminPrincipal): boolean {
  return Boolean(principal.via) && principal.actorRole === "operator";
}

/** Refuses a call naming more ids than the caller may act on at once. */
export function checkIdsPerCall(principal: AdminPrincipal, procedure: string, count: number): void {
  if (!isDashboardOperator(principal) || count <= OPERATOR_IDS_PER_CALL) return;
  throw new TRPCError({
    code: "FORBIDDEN",
    message:
      `${principal.name} has the operator role in the dashboard "${principal.via}", which acts on ${OPERATOR_IDS_PER_CALL} id per call; ` +
      `this ${procedure} names ${count}. Act on them one at a time, or have an admin use the bulk actions (jfast docs dashboard#users)`,
  });
}

/** Refuses an action on every row a filter selects to a person with the operator role (admins only). */
export function requireBulkRole(principal: AdminPrincipal, procedure: string): void {
  if (!isDashboardOperator(principal)) return;
  throw new TRPCError({
    code: "FORBIDDEN",
    message: `${procedure} acts on every matching job, and ${principal.name} has the operator role in the dashboard "${principal.via}"; bulk actions need the admin role (jfast docs dashboard#users)`,
  });
}
