import type { StoredResult } from "../../core/result.js";
import type { AttemptRun } from "../../core/job-life.js";
import type { JobInfo } from "../../core/queue-backend.js";

/** The job hash's fields for a result (docs/tasks.md#results), written by complete.lua. */
const RESULT = "result";
const RESULT_OMITTED = "result_omitted";

/**
 * complete.lua's arguments for a batch with results: each id followed by the hash field its result goes in and
 * that field's text ("" and "" for a job with none).
 */
export function completeArgsWithResults(ids: readonly string[], results: ReadonlyArray<StoredResult | undefined>): string[] {
  const args: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const result = results[i];
    if (!result) args.push(ids[i]!, "", "");
    else if ("omitted" in result) args.push(ids[i]!, RESULT_OMITTED, result.omitted);
    else args.push(ids[i]!, RESULT, JSON.stringify(result.value));
  }
  return args;
}

/**
 * complete.lua's arguments for a batch with attempts' records ('life'): each id followed by its result's field and
 * text (as above) and its attempt's record as JSON ("" for none).
 */
export function completeArgsWithLife(ids: readonly string[], results: ReadonlyArray<StoredResult | undefined> | undefined, runs: ReadonlyArray<AttemptRun | undefined>): string[] {
  const args: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const result = results?.[i];
    const run = runs[i];
    const text = run ? JSON.stringify(run) : "";
    if (!result) args.push(ids[i]!, "", "", text);
    else if ("omitted" in result) args.push(ids[i]!, RESULT_OMITTED, result.omitted, text);
    else args.push(ids[i]!, RESULT, JSON.stringify(result.value), text);
  }
  return args;
}

/** getJob's result fields from the job's hash. */
export function resultOfHash(hash: Record<string, string>): Pick<JobInfo, "result" | "resultOmitted"> {
  const text = hash[RESULT];
  if (text !== undefined) {
    try {
      return { result: JSON.parse(text) as unknown };
    } catch (error) {
      return { resultOmitted: `the stored result is not valid JSON (${(error as Error).message})` };
    }
  }
  const omitted = hash[RESULT_OMITTED];
  return omitted !== undefined ? { resultOmitted: omitted } : {};
}
