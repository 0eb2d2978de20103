/** The tRPC error code of a failed admin call (UNAUTHORIZED, FORBIDDEN, NOT_FOUND, BAD_GATEWAY…), or "". */
export function errorCode(error: unknown): string {
  return (error as { data?: { code?: string } } | null)?.data?.code ?? "";
}

/**
 * True when the service runs a runtime without this procedure (tRPC answers NOT_FOUND, "No procedure found").
 * Pages show that as "not offered by this service" rather than as an outage, so one dashboard can watch
 * services on different runtime versions.
 */
export function isMissingProcedure(error: unknown): boolean {
  return errorCode(error) === "NOT_FOUND" && /no procedure/i.test((error as Error | null)?.message ?? "");
}
