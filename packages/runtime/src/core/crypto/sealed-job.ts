import type { AttemptError, JobJSON } from "../job.js";
import { decryptText, decryptValue, encryptText, encryptValue, isEnvelope, isSealedText, kidOf } from "./envelope.js";
import type { Keyring } from "./keyring.js";

/** An attempt's message and stack encrypted (its class, reason and time stay readable for grouping and counts). */
export function sealError(error: AttemptError, keyring: Keyring): AttemptError {
  return {
    ...error,
    message: encryptText(String(error.message), keyring),
    ...(error.stack === undefined ? {} : { stack: encryptText(String(error.stack), keyring) }),
  };
}

/** Throws DecryptionError when a text cannot be opened. */
export function openError(error: AttemptError, keyring: Keyring | null): AttemptError {
  if (!isSealedText(error.message) && !isSealedText(error.stack)) return error;
  return {
    ...error,
    message: decryptText(String(error.message), keyring),
    ...(error.stack === undefined ? {} : { stack: decryptText(String(error.stack), keyring) }),
  };
}

export function sealJobJSON(json: JobJSON, keyring: Keyring): JobJSON {
  return { ...json, payload: encryptValue(json.payload, keyring), errors: json.errors.map((e) => sealError(e, keyring)) };
}

/** True when the job holds anything encrypted (its payload, or an error's text). */
export function isSealedJob(json: Pick<JobJSON, "payload" | "errors">): boolean {
  return isEnvelope(json.payload) || json.errors.some((e) => isSealedText(e.message) || isSealedText(e.stack));
}

/**
 * The job with everything encrypted under the current key, for `jfast keys rotate`; null when nothing needs it
 * (plaintext, or already under the current key). Throws DecryptionError for a value no key opens.
 */
export function resealJobJSON<T extends Pick<JobJSON, "payload" | "errors">>(json: T, keyring: Keyring): T | null {
  const current = keyring.current.kid;
  const stale = (value: unknown) => {
    const kid = kidOf(value);
    return kid !== null && kid !== current;
  };
  if (!stale(json.payload) && !json.errors.some((e) => stale(e.message) || stale(e.stack))) return null;
  const payload = isEnvelope(json.payload) ? encryptValue(decryptValue(json.payload, keyring), keyring) : json.payload;
  const errors = json.errors.map((e) => (isSealedText(e.message) || isSealedText(e.stack) ? sealError(openError(e, keyring), keyring) : e));
  return { ...json, payload, errors };
}
