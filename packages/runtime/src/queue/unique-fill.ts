import { createHash } from "node:crypto";
import type { Job } from "../core/job.js";
import type { TaskUnique } from "../core/task.js";
import { completeUnique, normalizeUnique, payloadKey, UNIQUE_KEY_MAX, type JobUnique } from "../core/unique.js";

const DEFAULT = normalizeUnique({}, "unique", false);

/**
 * Fills in a job's unique spec from its task's `unique` option (docs/tasks.md#unique-jobs): the key from the
 * payload unless the job gave one, the period or states unless the job gave them. Each task's option is
 * checked once and kept.
 */
export function taskUniqueFiller(): (job: Job, option: TaskUnique | undefined) => void {
  const checked = new WeakMap<TaskUnique, JobUnique>();
  return (job, option) => {
    let fromTask: JobUnique | null = null;
    if (option) {
      fromTask = checked.get(option) ?? null;
      if (!fromTask) {
        fromTask = normalizeUnique({ periodMs: option.periodMs, states: option.states } as Parameters<typeof normalizeUnique>[0], `task("${job.task}")`, false);
        checked.set(option, fromTask);
      }
    }
    job.unique = job.unique ? completeUnique(job.unique, fromTask) : { ...(fromTask ?? DEFAULT), key: keyOf(job, option) };
  };
}

function keyOf(job: Job, option: TaskUnique | undefined): string {
  if (option?.key) {
    const key: unknown = option.key(job.payload);
    return normalizeUnique({ key: key as string }, `task("${job.task}") unique.key(payload)`, true).key;
  }
  const text = payloadKey(job.payload);
  // A large payload makes a key too long to index: its digest holds the same jobs apart.
  return text.length <= UNIQUE_KEY_MAX ? text : `sha256:${createHash("sha256").update(text).digest("hex")}`;
}
