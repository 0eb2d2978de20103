/**
 * Waits until `check` returns something truthy and returns it, polling every `intervalMs`; a check that
 * throws counts as "not yet" (the service may still be starting). Past `timeoutMs` it throws, naming `what`
 * and the last error seen, so a failing test says what never happened rather than just "timeout".
 *
 *   const job = await eventually("the receipt job to finish", () => findJob(id).then((j) => j?.state === "completed" && j));
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: { timeoutMs?: number; intervalMs?: number } | number = {},
): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 100 } = typeof options === "number" ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}
