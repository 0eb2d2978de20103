import { createHash } from "node:crypto";
import type { Job, JobJSON } from "../core/job.js";
import type { JobUnique } from "../core/unique.js";
import { encryptValue } from "../core/crypto/envelope.js";
import { createKeyring, type Keyring } from "../core/crypto/keyring.js";
import type { JfastConfig } from "../config/load-config.js";
import type { TaskRegistry } from "../core/registry.js";
import { sealError } from "../core/crypto/sealed-job.js";

/** Which tasks store their jobs encrypted, and the keys to do it with (docs/security.md#encryption-at-rest). */
export interface JobEncryption {
  /** Null when JFAST_ENCRYPTION_KEYS holds no key: nothing is encrypted, and nothing encrypted can be read. */
  readonly keyring: Keyring | null;
  /** True for a task declared with `encrypt: true` (a task of another service: false, it is not ours to know). */
  encrypts(task: string): boolean;
  /** What a backend or an outbox row stores for `job`: its payload and errors sealed when its task encrypts. */
  storedJSON(job: Job): JobJSON;
}

export function createJobEncryption(params: { keyring: Keyring | null; encrypts(task: string): boolean }): JobEncryption {
  const { keyring } = params;
  return {
    keyring,
    encrypts: (task) => keyring !== null && params.encrypts(task),
    storedJSON(job) {
      const json = job.toJSON();
      if (keyring === null || !params.encrypts(job.task)) return json;
      const sealed: JobJSON = { ...json, payload: encryptValue(json.payload, keyring), errors: json.errors.map((e) => sealError(e, keyring)) };
      if (json.unique) sealed.unique = hashedUnique(json.unique);
      return sealed;
    },
  };
}

/** The service's encryption: its keys from JFAST_ENCRYPTION_KEYS, its encrypted tasks from the registry; null without keys. */
export function encryptionOf(config: Pick<JfastConfig, "encryption">, registry: TaskRegistry): JobEncryption | null {
  const keyring = createKeyring(config.encryption.keys);
  return keyring ? createJobEncryption({ keyring, encrypts: (task) => registry.get(task)?.options.encrypt === true }) : null;
}

/**
 * A unique key is compared, never read back, so an encrypted task's is stored as a hash: its default (the
 * payload's JSON) and most derived keys carry the payload's values. Idempotent, so a relayed job keeps its hash.
 */
export function hashedUnique(unique: JobUnique): JobUnique {
  if (unique.key.startsWith(HASH_PREFIX)) return unique;
  return { ...unique, key: HASH_PREFIX + createHash("sha256").update(unique.key).digest("hex") };
}

const HASH_PREFIX = "sha256:";
