import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { decryptText, decryptValue, encryptText, encryptValue, isEnvelope, kidOf, DecryptionError } from "./envelope.js";
import { createKeyring, parseEncryptionKeys } from "./keyring.js";
import { resealJobJSON } from "./sealed-job.js";

const key = () => randomBytes(32).toString("base64");

describe("encryption envelope", () => {
  it("seals a JSON value with a fresh nonce and the key id, and opens it with any key of the ring", () => {
    const first = `k1:${key()}`;
    const ring = createKeyring(parseEncryptionKeys(first))!;
    const a = encryptValue({ card: "4242" }, ring);
    const b = encryptValue({ card: "4242" }, ring);
    expect(isEnvelope(a)).toBe(true);
    expect(a.kid).toBe("k1");
    expect(a.iv).not.toBe(b.iv);
    expect(JSON.stringify(a)).not.toContain("4242");
    const rotated = createKeyring(parseEncryptionKeys(`k2:${key()},${first}`))!;
    expect(decryptValue(a, rotated)).toEqual({ card: "4242" });
    expect(encryptValue(a, rotated)).toBe(a);
  });

  it("seals text, and names the key id when no key opens it or it was altered", () => {
    const ring = createKeyring(parseEncryptionKeys(`old:${key()}`))!;
    const text = encryptText("declined for 4242", ring);
    expect(kidOf(text)).toBe("old");
    expect(decryptText(text, ring)).toBe("declined for 4242");
    const other = createKeyring(parseEncryptionKeys(`new:${key()}`))!;
    expect(() => decryptText(text, other)).toThrow(/key "old"/);
    const forged = createKeyring(parseEncryptionKeys(`old:${key()}`))!;
    try {
      decryptValue(encryptValue(1, ring), forged);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DecryptionError);
      expect((error as DecryptionError).code).toBe("DECRYPTION_FAILED");
    }
  });

  it("refuses malformed keys with ENCRYPTION_KEY_INVALID, never echoing the key", () => {
    expect(() => parseEncryptionKeys("nokid")).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_INVALID" }));
    expect(() => parseEncryptionKeys("k1:c2hvcnQ=")).toThrow(/not 32 bytes/);
    expect(() => parseEncryptionKeys(`a:b:${key()}`)).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_INVALID" }));
    const k = key();
    expect(() => parseEncryptionKeys(`k1:${k},k1:${k}`)).toThrow(/appears twice/);
    expect(parseEncryptionKeys(" ")).toEqual([]);
  });

  it("re-seals a job under the first key, and leaves one already under it alone", () => {
    const oldKey = `old:${key()}`;
    const before = createKeyring(parseEncryptionKeys(oldKey))!;
    const after = createKeyring(parseEncryptionKeys(`new:${key()},${oldKey}`))!;
    const json = { payload: encryptValue({ a: 1 }, before), errors: [{ attempt: 1, at: "x", class: "Error", message: encryptText("m", before) }] };
    const resealed = resealJobJSON(json, after)!;
    expect(kidOf(resealed.payload)).toBe("new");
    expect(kidOf(resealed.errors[0]!.message)).toBe("new");
    expect(decryptValue(resealed.payload, after)).toEqual({ a: 1 });
    expect(resealJobJSON(resealed, after)).toBeNull();
  });
});
