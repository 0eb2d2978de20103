import type { Job } from "../../core/job.js";
import { JobState } from "../../core/job-state.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import type { SqlExecutor } from "../../core/sql-port.js";
import { firstOfEachKey, scopedUniqueKey, type JobUnique } from "../../core/unique.js";
import { jobsToColumns, jsonbText, numberArray, textArray } from "./job-rows.js";
import { SQL } from "./load-sql.js";

/** Rounds of insert-then-read for a state-held key whose holder finished between the two (see enqueueUnique). */
const ROUNDS = 3;

/**
 * A batch with unique jobs (docs/tasks.md#unique-jobs) through `executor`: later jobs of a key
 * in the batch are duplicates of its first;  period-held keys are taken
 * in jfast_unique_keys (unique-periods.sql) before the insert; state-held keys are taken by the insert itself through
 * jfast_jobs_unique_idx (enqueue-unique.sql), and a row it skipped is a duplicate of the key's holder
 * (unique-holders.sql) — or, when the holder finished in between, inserted again.
 */
export async function enqueueUnique(params: { executor: SqlExecutor; queue: string; jobs: Job[] }): Promise<EnqueueResult> {
  const { executor, queue } = params;
  const { first, keys, laterOf } = firstOfEachKey(params.jobs);
  const keyOf = new Map(first.map((job, i) => [job.id, keys[i]!]));
  const duplicates = new Map<string, string>();

  const byPeriod = first.filter((job) => job.unique!.periodMs !== null);
  if (byPeriod.length > 0) {
    const rows = await executor.query<{ key: string; job_id: string }>(SQL.uniquePeriods, [
      queue,
      textArray(byPeriod.map((job) => keyOf.get(job.id)!)),
      textArray(byPeriod.map((job) => job.id)),
      numberArray(byPeriod.map((job) => job.unique!.periodMs)),
    ]);
    const holders = new Map(rows.map((row) => [row.key, row.job_id]));
    for (const job of byPeriod) {
      const holder = holders.get(keyOf.get(job.id)!);
      if (holder !== undefined && holder !== job.id) duplicates.set(job.id, holder);
    }
  }

  const inserted = new Set<string>();
  let pending = params.jobs.filter((job) => !laterOf.has(job.id) && !duplicates.has(job.id));
  for (let round = 0; round < ROUNDS && pending.length > 0; round++) {
    const [row] = await executor.query<{ ids: string[] }>(SQL.enqueueUnique, [queue, ...jobsToColumns(pending), ...uniqueColumns(pending)]);
    for (const id of row?.ids ?? []) inserted.add(id);
    const skipped = pending.filter((job) => !inserted.has(job.id) && job.unique?.states);
    if (skipped.length === 0) break;
    const held = await executor.query<{ key: string; id: string }>(SQL.uniqueHolders, [queue, textArray(skipped.map((job) => scopedUniqueKey(job)))]);
    const holders = new Map(held.map((row) => [row.key, row.id]));
    pending = [];
    for (const job of skipped) {
      const holder = holders.get(scopedUniqueKey(job));
      if (holder === undefined) pending.push(job);
      // Its own id: the same job enqueued again, left alone as any existing id is.
      else if (holder !== job.id) duplicates.set(job.id, holder);
    }
  }
  for (const [later, firstId] of laterOf) duplicates.set(later, duplicates.get(firstId) ?? firstId);
  const ids = [...new Set(params.jobs.map((job) => job.id))].filter((id) => inserted.has(id));
  return duplicates.size > 0 ? { inserted: ids, duplicates } : { inserted: ids };
}

/** $17..$19 of enqueue-unique.sql. */
function uniqueColumns(jobs: readonly Job[]): string[] {
  return [
    textArray(jobs.map((job) => (job.unique?.states ? scopedUniqueKey(job) : null))),
    textArray(jobs.map((job) => (job.unique?.states ? textArray(phasesOf(job.unique)) : null))),
    textArray(jobs.map((job) => (job.unique ? jsonbText(job.unique) : null))),
  ];
}

/** The phases of jfast_jobs (migration 0013) in which a job holds its key: ready and running are both 'open'. */
export function phasesOf(unique: JobUnique): string[] {
  const phases = new Set<string>();
  for (const state of unique.states ?? []) phases.add(state === JobState.ready || state === JobState.running ? "open" : state);
  return [...phases];
}
