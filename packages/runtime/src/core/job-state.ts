/**
 * The lifecycle of a job. One list, used by every backend.
 *  - waiting:   a flow's step whose parents have not all finished (docs/flows.md); never claimed until then
 *  - ready:     claimable once `availableAt` has passed (a delayed, backing-off or snoozed job is `ready` with a future time)
 *  - running:   claimed by a worker, leased until `lockedUntil`; an expired lease makes it claimable again
 *  - completed: the handler returned
 *  - dead:      exhausted its attempts, threw PermanentError, had no handler, or its worker was lost too often
 *  - cancelled: cancelled through the queue (`queue.cancel(id)`); never claimed again, never retried
 *  - expired:   its `deadline` (or `expiresInMs`) passed before it started (docs/flow-control.md#deadlines); never runs
 */
export const JobState = {
  waiting: "waiting",
  ready: "ready",
  running: "running",
  completed: "completed",
  dead: "dead",
  cancelled: "cancelled",
  expired: "expired",
} as const;

export type JobState = (typeof JobState)[keyof typeof JobState];
