import type { AttemptError } from "./job.js";

/** The parts of a stored job that can hold encrypted values (core/crypto): its payload and its errors. */
export interface StoredParts {
  payload: unknown;
  errors: AttemptError[];
}

/**
 * A backend that can rewrite, in place, the payload and errors of the jobs it keeps waiting (ready, scheduled) and
 * of its dead letters: how `jfast keys rotate` re-encrypts them (docs/security.md#encryption-at-rest). Each job is
 * rewritten only if it is unchanged and still waiting or dead when written: one claimed meanwhile is left, under
 * its old key, which its worker still holds.
 */
export interface StoredRewrite {
  rewriteStored(params: {
    /** The new parts, or null to leave the job as it is. A throw leaves it too, reported in `skipped`. */
    rewrite(parts: StoredParts): StoredParts | null;
  }): Promise<StoredRewriteResult>;
}

export interface StoredRewriteResult {
  /** Waiting jobs rewritten; null where the backend cannot rewrite them, `waitingNotSupported` saying why. */
  waiting: number | null;
  waitingNotSupported?: string;
  /** Dead letters rewritten. */
  dead: number;
  /** Jobs left as they were: rewrite threw (a key no longer held), or they changed meanwhile. */
  skipped: Array<{ id: string; reason: string }>;
}

export function supportsStoredRewrite(backend: unknown): backend is StoredRewrite {
  return typeof (backend as Partial<StoredRewrite> | null)?.rewriteStored === "function";
}

/** Applies `rewrite` to one job's parts, turning a throw into a skip. Shared by every backend. */
export function rewriteParts(
  id: string,
  parts: StoredParts,
  rewrite: (parts: StoredParts) => StoredParts | null,
  skipped: StoredRewriteResult["skipped"],
): StoredParts | null {
  try {
    return rewrite(parts);
  } catch (error) {
    skipped.push({ id, reason: (error instanceof Error ? error.message : String(error)).split("\n")[0]! });
    return null;
  }
}
