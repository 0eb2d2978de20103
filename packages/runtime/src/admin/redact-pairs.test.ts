import { describe, expect, it } from "vitest";
import { scrubPairs } from "./redact-pairs.js";

const hides = (name: string) => /password|token/i.test(name);
const scrub = (text: string) => scrubPairs(text, hides, "[redacted]");

describe("scrubPairs", () => {
  it("hides a hidden name's value in JSON, however deeply escaped", () => {
    const payload = { user: "ann", password: 'hun"ter\\2', n: 1 };
    const once = JSON.stringify(payload);
    const twice = JSON.stringify(once);
    const thrice = JSON.stringify({ body: twice });
    for (const text of [once, twice, thrice, `failed: ${once} (retry)`]) {
      const out = scrub(text);
      expect(out).not.toContain("hun");
      expect(out).not.toContain("ter");
      expect(out).toContain("ann");
    }
    expect(scrub(once)).toBe('{"user":"ann","password":"[redacted]","n":1}');
    expect(scrub(twice)).toBe(JSON.stringify('{"user":"ann","password":"[redacted]","n":1}'));
  });

  it("hides numbers and booleans, leaves objects and other names alone", () => {
    expect(scrub('{"pin_token": 123456, "ok": true}')).toBe('{"pin_token": "[redacted]", "ok": true}');
    expect(scrub('{"password": {"a": "b"}, "x": "y"}')).toBe('{"password": {"a": "b"}, "x": "y"}');
    expect(scrub("no json here")).toBe("no json here");
  });

  it("hides the rest of a message cut inside the value", () => {
    expect(scrub('body {"password":"hunter2 and more')).toBe('body {"password":"[redacted]"');
  });
});
