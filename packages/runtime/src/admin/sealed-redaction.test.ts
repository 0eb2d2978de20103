import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { encryptText, encryptValue } from "../core/crypto/envelope.js";
import { createKeyring, parseEncryptionKeys } from "../core/crypto/keyring.js";
import type { JobJSON } from "../core/job.js";
import { createRedaction } from "./redact.js";
import { sealedRedaction } from "./sealed-redaction.js";

const ring = (kid: string) => createKeyring(parseEncryptionKeys(`${kid}:${randomBytes(32).toString("base64")}`))!;

describe("sealed redaction", () => {
  const keys = ring("k1");
  const job = {
    id: "j1",
    task: "billing.charge",
    payload: encryptValue({ pan: "4242", api_token: "tok_123456" }, keys),
    errors: [{ attempt: 1, at: "2026-01-01T00:00:00.000Z", class: "Error", message: encryptText("declined with tok_123456", keys) }],
  } as unknown as JobJSON;
  const redaction = createRedaction({ fields: [], defaults: true });

  it("opens for a reader with the key, then redacts what it opened, error text included", () => {
    const shown = sealedRedaction(redaction, keys, true).job(job);
    expect(shown.payload).toEqual({ pan: "4242", api_token: "[redacted]" });
    expect(shown.errors[0]!.message).toBe("declined with [redacted]");
  });

  it("shows encrypted to a reader who may not, and to everyone when the service lacks the key", () => {
    for (const shown of [sealedRedaction(redaction, keys, false).job(job), sealedRedaction(redaction, null, true).job(job), sealedRedaction(redaction, ring("k2"), true).job(job)]) {
      expect(shown.payload).toEqual({ encrypted: true, kid: "k1" });
      expect(shown.errors[0]!.message).toMatch(/^encrypted/);
    }
  });
});
