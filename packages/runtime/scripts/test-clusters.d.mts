/** Registers a test run (its pid); a loopback cluster that is down now is the tests' own to stop (test-clusters.mjs). */
export function beginRun(pid?: number): Promise<void>;
/** Ends a test run; the last registered run to end stops the clusters the tests started. */
export function endRun(pid?: number): Promise<void>;
