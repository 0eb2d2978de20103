/** W3C traceparent: version-traceid-parentid-flags. */
export const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace id of a traceparent (null when absent or malformed): what a tracing UI searches by. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  return match && match[2] !== "0".repeat(32) ? match[2]! : null;
}
