import type { AttemptError, JobJSON } from "../core/job.js";
import { decryptText, decryptValue, isEnvelope, isSealedText, kidOf } from "../core/crypto/envelope.js";
import type { Keyring } from "../core/crypto/keyring.js";
import type { AdminPrincipal } from "./tokens.js";
import type { Redaction } from "./redact.js";

/** What the admin API shows for an encrypted payload it does not open (the key id tells which key it needs). */
export interface EncryptedValue {
  encrypted: true;
  kid: string;
}

/** What it shows for an encrypted error text it does not open. */
export const ENCRYPTED_TEXT = "encrypted";

/**
 * Who may read the plaintext of an encrypted task's payload and errors: operators (a dashboard's operators and
 * admins). Viewers see `{ encrypted: true }`, as does everyone when the service does not hold the key.
 */
export function mayReadEncrypted(principal: AdminPrincipal | null): boolean {
  return principal?.role === "operator";
}

/**
 * `redaction` with encrypted values opened first when `keyring` can and the caller may read them, else shown as
 * encrypted. Opened values then go through the redaction like any other (docs/security.md#encryption-at-rest).
 */
export function sealedRedaction<R extends Redaction>(redaction: R, keyring: Keyring | null, reveal: boolean): R {
  const value = (stored: unknown): unknown => {
    if (!isEnvelope(stored)) return stored;
    if (reveal && keyring) {
      try {
        return decryptValue(stored, keyring);
      } catch {
        // A key the service does not hold: shown as encrypted, with the id of the key it needs.
      }
    }
    return { encrypted: true, kid: stored.kid } satisfies EncryptedValue;
  };
  const text = (stored: string | undefined): string | undefined => {
    if (!isSealedText(stored)) return stored;
    if (reveal && keyring) {
      try {
        return decryptText(stored, keyring);
      } catch {
        return `${ENCRYPTED_TEXT} (key "${kidOf(stored)}")`;
      }
    }
    return ENCRYPTED_TEXT;
  };
  const error = (attempt: AttemptError | null): AttemptError | null => {
    if (attempt === null || typeof attempt !== "object") return attempt;
    if (!isSealedText(attempt.message) && !isSealedText(attempt.stack)) return attempt;
    return { ...attempt, message: text(attempt.message)!, ...(attempt.stack === undefined ? {} : { stack: text(attempt.stack) }) };
  };
  const job = (stored: JobJSON): JobJSON =>
    isEnvelope(stored.payload) || (Array.isArray(stored.errors) && stored.errors.some((e) => isSealedText(e?.message) || isSealedText(e?.stack)))
      ? { ...stored, payload: value(stored.payload), errors: Array.isArray(stored.errors) ? stored.errors.map((e) => error(e)!) : stored.errors }
      : stored;
  return {
    ...redaction,
    payload: (stored: unknown) => redaction.payload(value(stored)),
    job: (stored: JobJSON) => redaction.job(job(stored)),
    error: (attempt: AttemptError | null, stored: JobJSON) => redaction.error(error(attempt), job(stored)),
    values: (payload: unknown) => redaction.values(value(payload)),
  };
}
