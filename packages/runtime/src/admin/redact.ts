export const REDACTED = "[redacted]";

/**
 * Replaces the value of every property whose name is listed (at any depth, case-insensitive) before a payload
 * leaves the service. Works on a copy; the stored job is untouched.
 */
export function redact(value: unknown, fields: readonly string[]): unknown {
  if (fields.length === 0) return value;
  const names = new Set(fields.map((f) => f.toLowerCase()));
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === "object") {
      // fromEntries defines each key as an own property: assigning would turn a "__proto__" key into a
      // prototype change and drop it from the view.
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, names.has(key.toLowerCase()) ? REDACTED : walk(child)]));
    }
    return node;
  };
  return walk(value);
}
