import fc from "fast-check";

/**
 * The inputs the fuzz suites try: JSON-compatible payloads (fast-check's jsonValue) and the values the payload
 * rules are about — NUL, half surrogate pairs, 1 MB strings, nesting around the 256-level limit, unicode keys,
 * and the JavaScript values JSON would change — for payloads, task names, tenant ids and error messages.
 */

/** One unit of text: mostly any code point, sometimes one of the characters the rules and the wire care about. */
const unit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\u2028", "\ufeff", "\ufffd", "\\", '"', "'", "%", "{", "}", "\n", "\u0007", "\u007f") },
);

/** Text of any kind, short: keys, values, names. */
export const text = fc.string({ unit, maxLength: 24 });

/** Text that is valid Unicode without NUL: what a careful client sends. */
const cleanText = fc.string({ unit: "grapheme", maxLength: 24 });

/** Object keys, with the ones that trip up JavaScript code. */
const key = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "prototype", "toString", "", ".", "a.b", "$where", "0", "-1", "ключ", "キー", "🔑") },
);

/** JavaScript values JSON would change or cannot write: the rules refuse them (or, for Date, keep what toJSON says). */
const nonJson = fc.oneof(
  fc.constantFrom<unknown>(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, undefined, 10n),
  fc.constant(null).map(() => new Map([["a", 1]])),
  fc.constant(null).map(() => new Set([1])),
  fc.constant(null).map(() => new Uint8Array([1, 2])),
  fc.constant(null).map(() => new Date(Date.UTC(2026, 0, 2))),
  fc.constant(null).map(() => () => 1),
);

const { leaf: jsonLike } = fc.letrec<{ leaf: unknown; node: unknown }>((tie) => ({
  leaf: fc.oneof(
    { weight: 8, arbitrary: fc.oneof(text, cleanText, fc.double(), fc.integer(), fc.boolean(), fc.constant(null)) },
    { weight: 1, arbitrary: nonJson },
    { weight: 4, arbitrary: tie("node") },
  ),
  node: fc.oneof(
    { depthSize: "small", maxDepth: 4 },
    fc.array(tie("leaf"), { maxLength: 5 }),
    fc.dictionary(key, tie("leaf"), { maxKeys: 5 }),
  ),
}));

/** Arrays and objects nested around the documented limit (256), with a leaf of any kind at the bottom. */
const deep = fc
  .record({ levels: fc.integer({ min: 240, max: 270 }), objects: fc.boolean(), leaf: fc.oneof(text, fc.integer(), fc.constant([])) })
  .map(({ levels, objects, leaf }) => {
    let value: unknown = leaf;
    for (let i = 0; i < levels; i++) value = objects && i % 2 === 0 ? { [`level ${i}`]: value } : [value];
    return value;
  });

/** A string of up to 1 MB, sometimes with one character PostgreSQL cannot hold somewhere in it. */
const huge = fc
  .record({ size: fc.integer({ min: 256 * 1024, max: 1024 * 1024 }), poison: fc.constantFrom("", "", "\u0000", "\ud800"), at: fc.double({ min: 0, max: 1, noNaN: true }) })
  .map(({ size, poison, at }) => {
    const body = "jfast ✓ ".repeat(Math.ceil(size / 8)).slice(0, size);
    const cut = Math.floor(at * size);
    return { big: poison === "" ? body : `${body.slice(0, cut)}${poison}${body.slice(cut)}` };
  });

/** A payload: mostly JSON, sometimes deep, rarely 1 MB. */
export const payload: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: unit }) },
  { weight: 8, arbitrary: jsonLike },
  { weight: 1, arbitrary: fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }) },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: huge },
);

/** A name for a task nobody registered: it dies as an unknown task. */
export const unknownTaskName = fc.oneof(
  fc.string({ unit, minLength: 1, maxLength: 120 }),
  fc.constantFrom("(unreadable message)", "jfast.corrupt_job", " ", "fuzz.ok ", "FUZZ.OK", "a".repeat(200)),
);

export const tenantId = fc.oneof(fc.constant(null), text.filter((t) => t.length > 0), fc.constantFrom("acme", "tenant\u0000x", "ácme 🏢"));

/** An error message: anything, sometimes long (the recorded message is cut at 8 KiB). */
export const errorMessage = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit, maxLength: 80 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit, minLength: 1, maxLength: 8 }), fc.integer({ min: 1_000, max: 40_000 })).map(([s, n]) => s.repeat(Math.ceil(n / s.length)).slice(0, n)) },
);

/** What a job is for: a handler that returns, one that throws the message, or a task nobody knows. */
export type Outcome = { kind: "completes" } | { kind: "throws"; message: string } | { kind: "unknown"; task: string };

export const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "completes" as const }) },
  { weight: 3, arbitrary: errorMessage.map((message) => ({ kind: "throws" as const, message })) },
  { weight: 1, arbitrary: unknownTaskName.map((task) => ({ kind: "unknown" as const, task })) },
);

export interface FuzzInput {
  payload: unknown;
  tenantId: string | null;
  outcome: Outcome;
}

export const input: fc.Arbitrary<FuzzInput> = fc.record({ payload, tenantId, outcome });

/** One case: a few jobs enqueued together. */
export const fuzzCase = fc.array(input, { minLength: 1, maxLength: 5 });
