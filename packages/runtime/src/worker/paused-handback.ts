import type { Job } from "../core/job.js";
import type { PausedTaskSet } from "../core/pause.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { Logger } from "../observability/logger.js";
import type { OutcomeWriter } from "./outcome-writer.js";

/** A paused task's job the backend handed out anyway comes back claimable after this long. */
const HANDBACK_DELAY_MS = 2000;

/**
 * Keeps the jobs whose task is not paused and hands the others back, attempt returned, claimable again in
 * HANDBACK_DELAY_MS (a backend that cannot filter at claim, or a job claimed ahead just before its task was
 * paused). Shutdown waits for the hand-back like for any outcome.
 */
export function setAsidePaused(
  jobs: Job[],
  params: { paused: PausedTaskSet | undefined; backend: QueueBackend; workerId: string; writer: OutcomeWriter; logger: Logger },
): Job[] {
  const { paused } = params;
  if (!paused?.size || jobs.length === 0) return jobs;
  const back = jobs.filter((job) => paused.has(job.task));
  if (back.length === 0) return jobs;
  params.writer.track(
    params.backend.release({ workerId: params.workerId, jobs: back, availableAt: new Date(Date.now() + HANDBACK_DELAY_MS) }).catch((error: unknown) => {
      params.logger.error("could not hand back a paused task's jobs; they return when their lease expires", { error });
    }),
  );
  return jobs.filter((job) => !paused.has(job.task));
}
