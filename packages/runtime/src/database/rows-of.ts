/**
 * Rows out of whatever a driver returned: a node-postgres QueryResult, an array of them (a multi-statement
 * simple query: the last statement's rows), a PGlite Results, or already an array of rows.
 */
export function rowsOf<R>(result: unknown): R[] {
  if (Array.isArray(result)) {
    const last = result.at(-1) as { rows?: unknown } | undefined;
    if (result.length > 0 && last && typeof last === "object" && Array.isArray(last.rows) && "fields" in last) {
      return last.rows as R[];
    }
    return result as R[];
  }
  const rows = (result as { rows?: unknown } | null | undefined)?.rows;
  return Array.isArray(rows) ? (rows as R[]) : [];
}
