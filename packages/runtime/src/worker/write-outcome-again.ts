import { JfastError } from "../errors/jfast-error.js";
import type { Logger } from "../observability/logger.js";
import { sleep } from "./deferred.js";

/** First and longest wait between two tries of an outcome write that met an unreachable backend. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;
/** The codes of a backend or database that could not be reached (restarting, failing over): worth another try. */
const UNREACHABLE = new Set(["BACKEND_UNAVAILABLE", "DATABASE_UNAVAILABLE"]);

/**
 * What follows a finished job's outcome write (completed, retry, dead) that failed with `firstError`. A write that
 * met an unreachable backend (a broker restarting, a database failing over, a connection cut) is tried again,
 * 100 ms then doubling up to 2 s, until `until()` — the worker passes the time the job's lease surely holds, or
 * the end of shutdown's grace period if that comes first. Written late, the outcome still counts and the job does
 * not run again; each backend settles a job only for the worker that holds it, so a write that comes after
 * another worker took the job over changes nothing. On any other error, past that time or once `stopNow`
 * settles, the failure is logged and the job is left to its lease: it runs again when the lease expires.
 * Never rejects. (The first write is the caller's, so that a write that succeeds costs nothing more.)
 */
export async function writeOutcomeAgain(params: {
  firstError: unknown;
  write: () => Promise<void>;
  jobId: string;
  until: () => number;
  stopNow: { settled: boolean; promise: Promise<void> };
  logger: Logger;
}): Promise<void> {
  const { write, jobId, until, stopNow, logger } = params;
  let error = params.firstError;
  for (let tries = 1, waitMs = RETRY_MIN_MS; ; tries++, waitMs = Math.min(waitMs * 2, RETRY_MAX_MS)) {
    const unreachable = error instanceof JfastError && UNREACHABLE.has(error.code);
    if (!unreachable || Date.now() + waitMs >= until() || stopNow.settled) {
      logger.error("could not record the job's outcome; it runs again after its lease expires", { error, job_id: jobId, tries });
      return;
    }
    await Promise.race([sleep(waitMs), stopNow.promise]);
    try {
      await write();
      logger.info("recorded the job's outcome once the backend was back", { job_id: jobId, tries: tries + 1 });
      return;
    } catch (failure) {
      error = failure;
    }
  }
}
