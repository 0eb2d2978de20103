import { JfastError } from "../errors/jfast-error.js";
import { JobState } from "./job-state.js";
import { ListState, type JobInfo, type JobListing, type ListJobsParams } from "./queue-backend.js";

/** Entries a listing reads at most per page before it stops and hands back `next` (docs/admin-api.md#listing-jobs). */
export const LIST_WINDOW = 1000;

/**
 * The listing state a job is in now: a waiting job is ready once due, scheduled before; a flow step waiting for
 * the steps it runs after lists as scheduled too (docs/flows.md#states).
 */
export function listStateOf(info: JobInfo, now = Date.now()): ListState {
  if (info.state === JobState.ready) return Date.parse(info.job.availableAt) <= now ? ListState.ready : ListState.scheduled;
  if (info.state === JobState.waiting) return ListState.scheduled;
  return info.state;
}

/** Whether a job belongs on a page of `params`, filters included. */
export function matchesListing(info: JobInfo, params: ListJobsParams, now = Date.now()): boolean {
  return (
    listStateOf(info, now) === params.state &&
    (params.task === undefined || info.job.task === params.task) &&
    (params.tenantId === undefined || info.job.tenantId === params.tenantId) &&
    (params.id === undefined || info.job.id === params.id)
  );
}

/** A listing by exact id: one lookup by key, whatever the state's index. */
export async function listById(getJob: (params: { id: string }) => Promise<JobInfo | null>, params: ListJobsParams & { id: string }): Promise<JobListing> {
  const info = await getJob({ id: params.id });
  return { rows: info && matchesListing(info, params) ? [info] : [], next: null, exact: true };
}

/**
 * An opaque cursor: the key of the last entry read, bound to its state and order so a cursor of one listing is
 * refused by another instead of starting it in the wrong place.
 */
export function encodeCursor(params: Pick<ListJobsParams, "state" | "order">, key: ReadonlyArray<string | number>): string {
  return Buffer.from(JSON.stringify([params.state, params.order, ...key])).toString("base64url");
}

export function decodeCursor(params: Pick<ListJobsParams, "state" | "order" | "after">, arity: number): Array<string | number> | null {
  if (params.after === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(params.after, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== arity + 2 ||
    parsed[0] !== params.state ||
    parsed[1] !== params.order ||
    !parsed.every((part) => typeof part === "string" || typeof part === "number")
  ) {
    throw new JfastError(`not a cursor of a ${params.order}-first listing of ${params.state} jobs`, {
      code: "CURSOR_INVALID",
      hint: "pass back the next cursor of the previous page unchanged, with the same state and order",
      docs: "jfast docs admin-api#listing-jobs",
    });
  }
  return parsed.slice(2) as Array<string | number>;
}
