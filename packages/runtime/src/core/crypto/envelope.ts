import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { JfastError } from "../../errors/jfast-error.js";
import { ENCRYPTION_DOCS, type Keyring } from "./keyring.js";

/**
 * A JSON value encrypted at rest: AES-256-GCM, a random 12-byte nonce per value, the id of the key with it so
 * keys can rotate. What a backend stores in place of the value (a payload; results and progress when they exist).
 */
export interface Envelope {
  $enc: "v1";
  kid: string;
  iv: string;
  ct: string;
  tag: string;
}

/** Text fields (an error's message and stack) hold the same parts in one string: `$enc:v1:<kid>:<iv>:<tag>:<ct>`. */
const TEXT_PREFIX = "$enc:v1:";

export function isEnvelope(value: unknown): value is Envelope {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.$enc === "v1" && typeof v.kid === "string" && typeof v.iv === "string" && typeof v.ct === "string" && typeof v.tag === "string";
}

export function isSealedText(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(TEXT_PREFIX);
}

/** The key id of a sealed value or text; null for plaintext. */
export function kidOf(value: unknown): string | null {
  if (isEnvelope(value)) return value.kid;
  if (isSealedText(value)) return value.slice(TEXT_PREFIX.length).split(":")[0] ?? null;
  return null;
}

/** Why a value cannot be opened: its key is not among JFAST_ENCRYPTION_KEYS, or it fails authentication. */
export class DecryptionError extends JfastError {
  readonly kid: string;
  constructor(kid: string, why: "unknown-key" | "authentication", keyring: Keyring | null) {
    const known = keyring ? keyring.kids.join(", ") : "none";
    super(
      why === "unknown-key"
        ? `encrypted with key "${kid}", which JFAST_ENCRYPTION_KEYS does not hold (it holds: ${known})`
        : `encrypted with key "${kid}" and failed authentication: the key with that id is not the one that encrypted it, or the stored value was altered`,
      {
        code: why === "unknown-key" ? "ENCRYPTION_KEY_UNKNOWN" : "DECRYPTION_FAILED",
        hint: `add the key "${kid}" back to JFAST_ENCRYPTION_KEYS (after the encrypting key) and retry the dead letter`,
        docs: ENCRYPTION_DOCS,
      },
    );
    this.name = "DecryptionError";
    this.kid = kid;
  }
}

function seal(plain: Buffer, keyring: Keyring): { kid: string; iv: string; ct: string; tag: string } {
  const { kid, key } = keyring.current;
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { kid, iv: iv.toString("base64"), ct: ct.toString("base64"), tag: cipher.getAuthTag().toString("base64") };
}

function open(parts: { kid: string; iv: string; ct: string; tag: string }, keyring: Keyring | null): Buffer {
  const entry = keyring?.get(parts.kid);
  if (!entry) throw new DecryptionError(parts.kid, "unknown-key", keyring);
  try {
    const decipher = createDecipheriv("aes-256-gcm", entry.key, Buffer.from(parts.iv, "base64"));
    decipher.setAuthTag(Buffer.from(parts.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(parts.ct, "base64")), decipher.final()]);
  } catch {
    throw new DecryptionError(parts.kid, "authentication", keyring);
  }
}

/** The value sealed with the current key; an envelope already is one and is returned as it is. */
export function encryptValue(value: unknown, keyring: Keyring): Envelope {
  if (isEnvelope(value)) return value;
  return { $enc: "v1", ...seal(Buffer.from(JSON.stringify(value ?? null), "utf8"), keyring) };
}

/** The plaintext of an envelope; anything else is returned as it is. Throws DecryptionError. */
export function decryptValue(value: unknown, keyring: Keyring | null): unknown {
  if (!isEnvelope(value)) return value;
  return JSON.parse(open(value, keyring).toString("utf8")) as unknown;
}

export function encryptText(text: string, keyring: Keyring): string {
  if (isSealedText(text)) return text;
  const { kid, iv, ct, tag } = seal(Buffer.from(text, "utf8"), keyring);
  return `${TEXT_PREFIX}${kid}:${iv}:${tag}:${ct}`;
}

/** The plaintext of sealed text; other text is returned as it is. Throws DecryptionError. */
export function decryptText(text: string, keyring: Keyring | null): string {
  if (!isSealedText(text)) return text;
  const [kid = "", iv = "", tag = "", ct = ""] = text.slice(TEXT_PREFIX.length).split(":");
  return open({ kid, iv, tag, ct }, keyring).toString("utf8");
}
