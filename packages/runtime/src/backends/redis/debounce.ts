import { debouncedStart, scopedDebounceKey } from "../../core/debounce.js";
import type { Job, JobJSON } from "../../core/job.js";
import type { EnqueueResult } from "../../core/queue-backend.js";
import { BackendError } from "../../errors/jfast-error.js";
import { announceBatch, packJob, type RedisQueue } from "./context.js";

/** Reads and writes of one debounced job before it gives up: each lost round means another process wrote the key. */
const ROUNDS = 20;

/**
 * A batch with a debounced job (docs/flow-control.md#debounce). The other jobs are enqueued as usual. Each debounced one
 * reads its key's job and that job's JSON, decides here (fold the new payload and start into it, or store the new job),
 * and debounce.lua writes that only if the read still holds; else it reads again. Concurrent enqueues of one key, in
 * any process, so end with one waiting job holding the last payload written.
 */
export async function enqueueDebounced(q: RedisQueue, jobs: Job[], enqueue: (q: RedisQueue, params: { jobs: Job[] }) => Promise<EnqueueResult>): Promise<EnqueueResult> {
  const inserted: string[] = [];
  const duplicates = new Map<string, string>();
  const plain = jobs.filter((job) => job.debounce === null);
  if (plain.length > 0) {
    const result = await enqueue(q, { jobs: plain });
    inserted.push(...result.inserted);
    for (const [id, holder] of result.duplicates ?? []) duplicates.set(id, holder);
  }
  for (const job of jobs) {
    if (job.debounce === null) continue;
    const folded = await debounceOne(q, job);
    if (folded === null) inserted.push(job.id);
    else if (folded !== job.id) duplicates.set(job.id, folded);
  }
  return duplicates.size > 0 ? { inserted, duplicates } : { inserted };
}

/** The id of the job `job` was folded into; null when `job` itself was stored (or its id existed: left alone). */
async function debounceOne(q: RedisQueue, job: Job): Promise<string | null> {
  const reg = `${q.keys.debouncePrefix}${scopedDebounceKey(job)}`;
  for (let round = 0; round < ROUNDS; round++) {
    const heldBy = (await q.redis.get(reg)) ?? "";
    const [state, attempts, json] = heldBy === "" ? [null, null, null] : await q.redis.hmget(q.keys.job(heldBy), "state", "attempts", "json");
    if (state === "ready" && Number(attempts ?? 0) === 0 && json) {
      const stored = JSON.parse(json) as JobJSON;
      const at = debouncedStart(job.debounce!, Date.parse(stored.createdAt), Date.now());
      // The stored JSON's own keys, in their order (id and task first: the scripts read them), with the new payload.
      const next = JSON.stringify({ ...stored, payload: job.payload, availableAt: new Date(at).toISOString() });
      const done = await q.script("debounce", "debounce a job", ["fold", reg, heldBy, q.keys.parkedPrefix, json, next, at]);
      if (Number(done) === 1) return heldBy;
      continue;
    }
    const args: Array<string | number> = ["insert", reg, heldBy, q.keys.parkedPrefix];
    packJob(job, args);
    const done = Number(await q.script("debounce", "debounce a job", args));
    if (done === 0) continue;
    if (done === 1) await announceBatch(q, [job], [job.id]);
    return null;
  }
  throw new BackendError(`could not debounce a "${job.task}" job: its key was written by others ${ROUNDS} times while this enqueue read it`, {
    code: "BACKEND_ERROR",
    hint: "enqueue it again; so many enqueues of one key at once usually means the key is too coarse",
    docs: "jfast docs flow-control#debounce",
  });
}
