import { ConfigError } from "../../errors/jfast-error.js";

/** One key of `JFAST_ENCRYPTION_KEYS`: its id, stored next to every value it encrypts, and 32 bytes. */
export interface EncryptionKey {
  readonly kid: string;
  readonly key: Buffer;
}

/** The first key encrypts; every key decrypts, so a new key goes first and the old ones stay until nothing uses them. */
export interface Keyring {
  readonly current: EncryptionKey;
  get(kid: string): EncryptionKey | undefined;
  readonly kids: readonly string[];
}

export const ENCRYPTION_DOCS = "jfast docs security#encryption-at-rest";

/** How to make a key, in every error that asks for one. */
export const KEY_RECIPE = `node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`;

/** A key id ends up inside stored text ("$enc:v1:<kid>:..."), so it never holds a colon. */
const KID = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * `kid:base64key,kid:base64key`: the value of JFAST_ENCRYPTION_KEYS. Throws ENCRYPTION_KEY_INVALID naming the
 * entry (by its position and id, never its key) when one is malformed.
 */
export function parseEncryptionKeys(text: string | undefined): EncryptionKey[] {
  const entries = (text ?? "").split(",").map((e) => e.trim()).filter(Boolean);
  const keys: EncryptionKey[] = [];
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(":");
    const kid = colon < 0 ? "" : entry.slice(0, colon);
    const encoded = colon < 0 ? "" : entry.slice(colon + 1);
    const where = `JFAST_ENCRYPTION_KEYS entry ${index + 1}${KID.test(kid) ? ` ("${kid}")` : ""}`;
    if (!KID.test(kid)) throw invalidKey(`${where} must be <key id>:<base64 key>, with an id of letters, digits, "_", "-" or "." (up to 64)`);
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
    if (key.length !== 32) throw invalidKey(`${where} is not 32 bytes of base64 (got ${key.length} bytes)`);
    if (keys.some((k) => k.kid === kid)) throw invalidKey(`${where}: the key id "${kid}" appears twice`);
    keys.push({ kid, key });
  });
  return keys;
}

export function createKeyring(keys: readonly EncryptionKey[]): Keyring | null {
  if (keys.length === 0) return null;
  const byKid = new Map(keys.map((k) => [k.kid, k]));
  return { current: keys[0]!, get: (kid) => byKid.get(kid), kids: keys.map((k) => k.kid) };
}

function invalidKey(message: string): ConfigError {
  return new ConfigError(message, {
    code: "ENCRYPTION_KEY_INVALID",
    hint: `each entry is <id>:<32 random bytes in base64>, the encrypting key first; make a key with ${KEY_RECIPE}`,
    docs: ENCRYPTION_DOCS,
  });
}
