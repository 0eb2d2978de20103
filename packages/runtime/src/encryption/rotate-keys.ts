import type { Jfast } from "../create-jfast.js";
import { createKeyring, ENCRYPTION_DOCS, KEY_RECIPE } from "../core/crypto/keyring.js";
import { resealJobJSON } from "../core/crypto/sealed-job.js";
import type { BackendKind } from "../core/queue-backend.js";
import type { StoredParts } from "../core/stored-rewrite.js";
import type { DatabaseProvider } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";
import { rewriteOutboxJobs } from "../outbox/reseal-rows.js";

/** What `jfast keys rotate` did (docs/cli.md#jfast-keys-rotate). */
export interface KeyRotationReport {
  /** The key everything rewritten is now encrypted with: the first of JFAST_ENCRYPTION_KEYS. */
  kid: string;
  queues: QueueRotation[];
  /** Job rows of jfast_outbox; null without the outbox plugin. */
  outbox: { rewritten: number; skipped: Array<{ id: string; reason: string }> } | null;
}

export interface QueueRotation {
  /** The named queue ("default", or `[queues.<name>]`). */
  queue: string;
  backend: BackendKind;
  /** Ready and scheduled jobs rewritten; null where the backend cannot (`notSupported` says why). */
  waiting: number | null;
  dead: number;
  /** Why waiting jobs (or everything) were left as they were, when the backend cannot rewrite them. */
  notSupported: string | null;
  /** Jobs left under their key: one no key opens, or one claimed meanwhile. */
  skipped: Array<{ id: string; reason: string }>;
}

/**
 * Re-encrypts with the first key of JFAST_ENCRYPTION_KEYS what waits: every named queue's waiting jobs and dead
 * letters where its backend can rewrite them, and the outbox's job rows. Values already under the first key and
 * plaintext are left alone, so it can run again at any time; a running job keeps its key until it finishes.
 */
export async function rotateEncryptionKeys(jfast: Jfast): Promise<KeyRotationReport> {
  const keyring = createKeyring(jfast.config.encryption.keys);
  if (!keyring) {
    throw new ConfigError("JFAST_ENCRYPTION_KEYS holds no key to re-encrypt with", {
      code: "ENCRYPTION_KEY_MISSING",
      hint: `set JFAST_ENCRYPTION_KEYS=<new id>:<key>,<old id>:<old key> (the new key first); make a key with ${KEY_RECIPE}`,
      docs: ENCRYPTION_DOCS,
    });
  }
  const rewrite = (parts: StoredParts): StoredParts | null => resealJobJSON(parts, keyring);
  const queues: QueueRotation[] = [];
  if (jfast.config.queue) {
    for (const named of jfast.require("queue").queues.values()) {
      const { backend } = named;
      const result = await backend.rewriteStored({ rewrite });
      queues.push({ queue: named.name, backend: backend.kind, waiting: result.waiting, dead: result.dead, notSupported: result.waitingNotSupported ?? null, skipped: result.skipped });
    }
  }
  const outbox = jfast.config.outbox
    ? await rewriteOutboxJobs({ db: jfast.require<DatabaseProvider>("database").sql, rewrite: (body) => resealJobJSON(body, keyring) })
    : null;
  return { kid: keyring.current.kid, queues, outbox };
}
