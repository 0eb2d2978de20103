import type { JobSearchInput } from "~/trpc/types";

/** The states jobs.search takes (a flow's waiting steps are found by id, or on the Flows page). */
type SearchState = NonNullable<JobSearchInput["state"]>;

export const STATES: SearchState[] = ["ready", "scheduled", "running", "completed", "cancelled", "expired", "dead"];

/**
 * The searches one form makes: a search by task or tenant alone, in no chosen state, looks through every state (one
 * jobs.search per state, each through that state's own listing); any other search is made as it is.
 */
export function searchesOf(input: JobSearchInput): JobSearchInput[] {
  if (input.id || input.payload || input.state || (!input.task && !input.tenant)) return [input];
  return STATES.map((state) => ({ ...input, state }));
}

export interface SearchDraft {
  id: string;
  task: string;
  tenant: string;
  state: "" | SearchState;
  path: string;
  value: string;
  as: "text" | "number" | "boolean";
}

export const EMPTY_DRAFT: SearchDraft = { id: "", task: "", tenant: "", state: "", path: "", value: "", as: "text" };

/** Turns the form into the admin API's search input, or says what is wrong with it. */
export function toSearchInput(draft: SearchDraft): { input: JobSearchInput } | { error: string } {
  const input: JobSearchInput = {};
  if (draft.id.trim()) input.id = draft.id.trim();
  if (draft.task.trim()) input.task = draft.task.trim();
  if (draft.tenant.trim()) input.tenant = draft.tenant.trim();
  if (draft.state) input.state = draft.state;
  const path = draft.path.trim();
  if (path || draft.value.trim()) {
    if (!/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/.test(path)) return { error: "The payload field is a dot path such as customer.id." };
    let equals: string | number | boolean = draft.value;
    if (draft.as === "number") {
      equals = Number(draft.value);
      if (draft.value.trim() === "" || !Number.isFinite(equals)) return { error: `"${draft.value}" is not a number.` };
    } else if (draft.as === "boolean") {
      if (!/^(true|false)$/.test(draft.value.trim())) return { error: "A true/false value is true or false." };
      equals = draft.value.trim() === "true";
    }
    input.payload = { path, equals };
  }
  if (Object.keys(input).length === 0) return { error: "Fill in at least one field." };
  return { input };
}
