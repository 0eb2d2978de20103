import { JfastError } from "../errors/jfast-error.js";

/**
 * What a job or an event may carry: what JSON carries and every backend stores and gives back as it was given.
 * Checked when the job or event is made, so that a value one backend cannot store (PostgreSQL refuses NUL and
 * half a surrogate pair in JSON) is refused alike on all of them, with the path of the value, before anything is
 * written — never later, in the middle of a claim or a death. docs/tasks.md#payloads lists the rules.
 */
export const STORABLE_DEPTH = 256;

const DOCS = "jfast docs tasks#payloads";

/** True when the text has no NUL and no lone surrogate (the two things PostgreSQL's json cannot hold). */
export function isStorableText(text: string): boolean {
  // The common case, text with neither NUL nor any surrogate, is one scan.
  if (!SUSPECT.test(text)) return true;
  return !text.includes("\u0000") && !LONE_SURROGATE.test(text);
}

const SUSPECT = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Throws PAYLOAD_UNSUPPORTED naming `what` (`the payload of a "x.y" job`) and the path of the first bad value. */
export function assertStorable(value: unknown, what: string): void {
  const path: Array<string | number> = [];
  const problem = check(value, path, 0, true);
  if (problem !== null) {
    throw new JfastError(`${what} cannot be stored: ${describe(path)} ${problem}`, {
      code: "PAYLOAD_UNSUPPORTED",
      hint: "send plain JSON: objects, arrays, strings without \\u0000 or lone surrogates, finite numbers, booleans and null (binary data as base64, a Map as Object.fromEntries(map), a BigInt as a string)",
      docs: DOCS,
    });
  }
}

/** Throws PAYLOAD_UNSUPPORTED when a job's or event's text field (task, id, tenant) could not be stored. */
export function assertStorableText(text: string | null, what: string): void {
  if (text === null || isStorableText(text)) return;
  throw new JfastError(`${what} cannot be stored: it ${textProblem(text)}`, {
    code: "PAYLOAD_UNSUPPORTED",
    hint: "remove the character from the value",
    docs: DOCS,
  });
}

function check(value: unknown, path: Array<string | number>, depth: number, inArrayOrTop: boolean): string | null {
  switch (typeof value) {
    case "string":
      return isStorableText(value) ? null : textProblem(value);
    case "number":
      return Number.isFinite(value) ? null : `is ${String(value)}, which JSON would store as null`;
    case "boolean":
      return null;
    case "bigint":
      return "is a BigInt, which JSON cannot hold (send it as a string)";
    case "undefined":
    case "function":
    case "symbol":
      // An object's property of these kinds is left out, as JSON.stringify does; elsewhere it would change.
      return inArrayOrTop ? `is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}, which JSON would store as null (use null)` : null;
    default:
      break;
  }
  if (value === null) return null;
  if (depth >= STORABLE_DEPTH) return `is nested deeper than ${STORABLE_DEPTH} levels (or refers to itself)`;
  const object = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof object.toJSON === "function") {
    // A Date, or anything that says how it is written: checked as what JSON.stringify would write.
    const key = path.length === 0 ? "" : String(path[path.length - 1]);
    return check((object.toJSON as (key: string) => unknown)(key), path, depth + 1, true);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const problem = check(value[i], path, depth + 1, true);
      if (problem !== null) return problem;
      path.pop();
    }
    return null;
  }
  const kind = unstorableKind(value as object);
  if (kind !== null) return `is ${kind}`;
  for (const key of Object.keys(object)) {
    path.push(key);
    if (!isStorableText(key)) return `has a key that ${textProblem(key)}`;
    const problem = check(object[key], path, depth + 1, false);
    if (problem !== null) return problem;
    path.pop();
  }
  return null;
}

function unstorableKind(value: object): string | null {
  if (value instanceof Map) return "a Map, which JSON would store as {} (send Object.fromEntries(map))";
  if (value instanceof Set) return "a Set, which JSON would store as {} (send [...set])";
  if (value instanceof WeakMap || value instanceof WeakSet) return "a WeakMap or WeakSet, which JSON cannot hold";
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return "binary data, which JSON cannot hold as it is (send it as base64)";
  if (value instanceof RegExp || value instanceof Error || value instanceof Promise) {
    return `a ${value.constructor.name}, which JSON would store as {}`;
  }
  return null;
}

function textProblem(text: string): string {
  return text.includes("\u0000")
    ? "contains the NUL character (\\u0000), which PostgreSQL cannot store"
    : "contains half of a surrogate pair (a lone \\ud800-\\udfff), which is not valid Unicode text";
}

function describe(path: ReadonlyArray<string | number>): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(printable(key))}]`;
  }
  return text === "" ? "the value" : `the value at ${text.startsWith(".") ? text.slice(1) : text}`;
}

/** A key as it can be printed in a message (its NUL and lone surrogates shown as escapes). */
function printable(key: string): string {
  return key.replace(/\u0000/g, "\\u0000").replace(LONE_SURROGATE_GLOBAL, (c) => `\\u${c.charCodeAt(0).toString(16)}`).slice(0, 80);
}

const LONE_SURROGATE_GLOBAL = new RegExp(LONE_SURROGATE.source, "g");

/**
 * Text of an error as it is recorded on a job (message, stack): what PostgreSQL cannot store replaced by U+FFFD,
 * cut to `max` characters with a marker saying how much was left out. An error is recorded whatever it holds.
 */
export function recordableText(text: string, max: number): string {
  let clean = text.length > max ? text.slice(0, max) : text;
  if (!isStorableText(clean)) clean = clean.replace(/\u0000/g, "\ufffd").replace(LONE_SURROGATE_GLOBAL, "\ufffd");
  return text.length > max ? `${clean}… [${text.length - max} more characters cut]` : clean;
}
