/**
 * A handler's return value as the backend stores it with the completed job (docs/tasks.md#results): the value,
 * or why it was not stored. Later flow steps read it by job id, the admin API and `jfast jobs show` show it.
 */
/** `[plugin.queue] max_result_bytes` when not set. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

export type StoredResult = { value: unknown } | { omitted: string };

/**
 * What to store for a handler that returned `value`: undefined when it returned nothing (nothing is stored, and
 * plain jobs pay nothing: no stringify). A result whose JSON is larger than `maxBytes` (UTF-8) or that has no
 * JSON form is not stored; the job still completes and its record says why.
 */
export function storedResult(value: unknown, maxBytes: number): StoredResult | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { omitted: `the handler's return value is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (text === undefined) return { omitted: `the handler's return value is not JSON: JSON.stringify gives nothing for a ${typeof value}` };
  // A UTF-8 byte is at least one UTF-16 unit and at most three per unit: count the bytes only when in doubt.
  const bytes = text.length * 3 <= maxBytes ? text.length : Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    return { omitted: `the handler's return value is ${bytes} bytes of JSON, more than [plugin.queue] max_result_bytes (${maxBytes})` };
  }
  // Stored as its JSON form (a Date becomes its string), as every backend would read it back.
  return { value: JSON.parse(text) as unknown };
}

/** The admin view's fields for a stored result (JobInfo's `result` or `resultOmitted`). */
export function resultFields(stored: StoredResult): { result: unknown } | { resultOmitted: string } {
  return "omitted" in stored ? { resultOmitted: stored.omitted } : { result: stored.value };
}
