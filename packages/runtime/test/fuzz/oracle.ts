/**
 * What the documented payload rules (docs/tasks.md#payloads) say about a value, computed here from the table in
 * the docs and not through the runtime's own check, so that the fuzz suites test the one against the other.
 */

/** Nesting the docs allow: a path from the top through at most this many arrays and objects. */
export const DOCUMENTED_DEPTH = 256;

/** The first code unit of text PostgreSQL cannot hold: a NUL, or a surrogate without its other half. */
export function badTextIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return i;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return i;
  }
  return -1;
}

/** True when the docs say `new Job` refuses this payload. No payload (undefined, or null) is the empty object. */
export function payloadRefused(value: unknown): boolean {
  return value !== undefined && refused(value, 0, true);
}

/** True when the docs say a task name, tenant or request id is refused. */
export function textRefused(text: string | null): boolean {
  return text !== null && badTextIndex(text) !== -1;
}

function refused(value: unknown, containers: number, elementOrTop: boolean): boolean {
  if (value === null || typeof value === "boolean") return false;
  if (typeof value === "string") return badTextIndex(value) !== -1;
  if (typeof value === "number") return !Number.isFinite(value);
  if (typeof value === "bigint") return true;
  if (typeof value === "undefined" || typeof value === "function" || typeof value === "symbol") return elementOrTop;
  if (value instanceof Date) return false;
  if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return true;
  if (value instanceof RegExp || value instanceof Error || value instanceof Promise) return true;
  // This value is one more array or object on the path from the top.
  if (containers + 1 > DOCUMENTED_DEPTH) return true;
  if (Array.isArray(value)) return value.some((element) => refused(element, containers + 1, true));
  return Object.keys(value).some((key) => badTextIndex(key) !== -1 || refused((value as Record<string, unknown>)[key], containers + 1, false));
}

/** `[plugin.queue] max_payload_bytes` by default (docs/configuration.md): larger is refused at enqueue. */
export const DOCUMENTED_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** True when enqueue refuses an accepted payload as too large: its JSON, in UTF-8, is over the limit. */
export function payloadTooLarge(value: unknown): boolean {
  return Buffer.byteLength(JSON.stringify(value ?? null), "utf8") > DOCUMENTED_MAX_PAYLOAD_BYTES;
}

/** The payload a handler gets back for an accepted one: what JSON gives back (no payload at all is `{}`). */
export function asJsonGivesBack(value: unknown): unknown {
  if (value === undefined || value === null) return {};
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/** The longest error message recorded on a job, before the marker saying how much was cut. */
export const RECORDED_MESSAGE_MAX = 8 * 1024;

/** An error message as the docs say it is recorded: NUL and lone surrogates shown as U+FFFD, cut with a marker. */
export function recordedMessage(message: string): string {
  const cut = message.length > RECORDED_MESSAGE_MAX;
  const text = cut ? message.slice(0, RECORDED_MESSAGE_MAX) : message;
  let clean = "";
  for (let i = 0; i < text.length; i++) {
    const pair = text.slice(i, i + 2);
    if (pair.length === 2 && badTextIndex(pair) === -1 && pair.charCodeAt(0) >= 0xd800 && pair.charCodeAt(0) <= 0xdbff) {
      clean += pair;
      i++;
    } else {
      clean += badTextIndex(text[i]!) === -1 ? text[i] : "\ufffd";
    }
  }
  return cut ? `${clean}… [${message.length - RECORDED_MESSAGE_MAX} more characters cut]` : clean;
}
