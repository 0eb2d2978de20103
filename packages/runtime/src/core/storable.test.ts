import { describe, expect, it } from "vitest";
import { JfastError } from "../errors/jfast-error.js";
import { Event } from "./event.js";
import { Job } from "./job.js";
import { assertStorable, isStorableText, recordableText, STORABLE_DEPTH } from "./storable.js";

function refusal(value: unknown): JfastError {
  try {
    assertStorable(value, "the payload");
  } catch (error) {
    expect(error).toBeInstanceOf(JfastError);
    expect((error as JfastError).code).toBe("PAYLOAD_UNSUPPORTED");
    return error as JfastError;
  }
  throw new Error(`expected ${String(value)} to be refused`);
}

describe("what a payload may carry", () => {
  it("takes plain JSON, valid surrogate pairs and unicode keys, and what toJSON writes (a Date)", () => {
    const value = {
      text: "émoji 😀 and 中文",
      "clé ünïcode 🔑": [1, -2.5, 0, true, false, null, { nested: ["a"] }],
      at: new Date("2026-01-01T00:00:00Z"),
      optional: undefined,
      fn: () => 1,
    };
    expect(() => assertStorable(value, "the payload")).not.toThrow();
    expect(isStorableText("a\ud83d\ude00b")).toBe(true);
  });

  it.each([
    ["a NUL character", { a: "x\u0000y" }, /the value at a contains the NUL character/],
    ["a lone high surrogate", { a: ["ok", "\ud800"] }, /the value at a\[1\] contains half of a surrogate pair/],
    ["a lone low surrogate", "\udc00x", /the value contains half of a surrogate pair/],
    ["a high surrogate at the end", "x\ud83d", /half of a surrogate pair/],
    ["NaN", { n: Number.NaN }, /the value at n is NaN, which JSON would store as null/],
    ["Infinity", [Infinity], /the value at \[0\] is Infinity/],
    ["a BigInt", { big: 10n }, /is a BigInt/],
    ["a Map", { m: new Map([["a", 1]]) }, /the value at m is a Map, which JSON would store as \{\}/],
    ["a Set", { s: new Set([1]) }, /is a Set/],
    ["binary data", { b: new Uint8Array([1, 2]) }, /binary data/],
    ["undefined in an array", [1, undefined], /the value at \[1\] is undefined, which JSON would store as null/],
    ["a function at the top", () => 1, /is a function/],
    ["a key with NUL", { "bad\u0000key": 1 }, /the value at \["bad\\\\u0000key"\] has a key that contains the NUL character/],
  ])("refuses %s, naming where it is", (_name, value, message) => {
    expect(refusal(value).message).toMatch(message);
  });

  it("refuses nesting deeper than the limit and a value that refers to itself, without overflowing the stack", () => {
    let deep: unknown = 1;
    for (let i = 0; i < STORABLE_DEPTH + 5; i++) deep = [deep];
    expect(refusal(deep).message).toMatch(/nested deeper than 256 levels/);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(refusal(cyclic).message).toMatch(/nested deeper than 256 levels \(or refers to itself\)/);
    let shallowEnough: unknown = 1;
    for (let i = 0; i < STORABLE_DEPTH - 1; i++) shallowEnough = { k: shallowEnough };
    expect(() => assertStorable(shallowEnough, "the payload")).not.toThrow();
  });

  it("is checked by new Job and new Event, for the payload and the text fields", () => {
    expect(() => new Job({ task: "invoice.send", payload: { note: "a\u0000b" } })).toThrow(
      /the payload of a "invoice.send" job cannot be stored: the value at note contains the NUL character[\s\S]*see: jfast docs tasks#payloads/,
    );
    expect(() => new Job({ task: "invoice.send", payload: {}, tenantId: "acme\ud800" })).toThrow(/the tenant id of a "invoice.send" job cannot be stored/);
    expect(() => new Job({ task: "invoice.\u0000send", payload: {} })).toThrow(/the task name .* cannot be stored/);
    expect(() => new Job({ task: "invoice.send", id: "a\u0000", payload: {} })).toThrow(/the id of a "invoice.send" job/);
    expect(() => new Event({ type: "invoice.paid", data: { n: Number.NaN } })).toThrow(/the data of a "invoice.paid" event cannot be stored: the value at n is NaN/);
    expect(() => new Event({ type: "invoice.paid", data: {}, key: "k\u0000" })).toThrow(/the key of a "invoice.paid" event/);
  });
});

describe("error text as a job records it", () => {
  it("replaces NUL and lone surrogates with U+FFFD and keeps valid pairs", () => {
    expect(recordableText("a\u0000b\ud800c😀", 100)).toBe("a\ufffdb\ufffdc😀");
  });

  it("cuts long text with a marker saying how much was left out", () => {
    const text = "x".repeat(100_000);
    const recorded = recordableText(text, 8192);
    expect(recorded.startsWith("x".repeat(8192))).toBe(true);
    expect(recorded.endsWith("… [91808 more characters cut]")).toBe(true);
  });

  it("never leaves half a pair where the cut falls inside one", () => {
    const recorded = recordableText(`${"x".repeat(9)}😀tail`, 10);
    expect(isStorableText(recorded)).toBe(true);
    expect(recorded.startsWith("xxxxxxxxx\ufffd…")).toBe(true);
  });
});
