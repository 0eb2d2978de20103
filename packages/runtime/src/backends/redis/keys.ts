import { DEFAULT_PRIORITY, MAX_PRIORITY } from "../../core/job.js";

/**
 * Every Redis key of one queue, built here and nowhere else (the Lua scripts receive these names, or the
 * prefixes below, as arguments and never spell a key themselves).
 *
 * All keys carry the hash tag `{<queue>}`: Redis Cluster hashes only the part inside the braces, so every key
 * of a queue lives in one slot and each script, which touches several of them at once, runs on one node.
 *
 *   <p>{q}:ready                 LIST  ids of priority-5 jobs (the default) claimable now; pushed on the left,
 *                                      claimed from the right (FIFO); idle workers block on it
 *   <p>{q}:ready:<n>             LIST  the same for priority n (0..9 but 5); claims take priority 0's first
 *                                      (docs/tasks.md#priority)
 *   <p>{q}:scheduled             ZSET  job id → due time (ms): delayed jobs and retries backing off
 *   <p>{q}:running               ZSET  job id → lease deadline (ms)
 *   <p>{q}:dead                  ZSET  job id → time of death (ms); listed newest first
 *   <p>{q}:completed             ZSET  job id → completion time (ms); pruned after the retention period
 *   <p>{q}:cancelled             ZSET  job id → cancellation time (ms), for the pruner (docs/queues.md#retention);
 *                                      expired jobs too (docs/flow-control.md#deadlines)
 *   <p>{q}:deadlines             ZSET  job id → its deadline (ms): jobs enqueued with one, for the sweep (expire-due.lua)
 *   <p>{q}:debounce:<key>        STRING the id of the last job made for a debounce key scoped by task and tenant
 *                                      (debounce.lua, docs/flow-control.md#debounce)
 *   <p>{q}:pruner                STRING the owner of the pruner's lease, expiring with it (one pruner at a time)
 *   <p>{q}:workers               ZSET  worker id → last heartbeat (ms): the workers that may own a processing list
 *   <p>{q}:job:<id>              HASH  json (the job as enqueued, unchanged), attempts, errors, available_at, priority
 *                                      (absent: 5),
 *                                      max_attempts, state, owner, lease, died_at, done_at, snoozes (times it
 *                                      returned snooze(ms)), cancelled_at (a cancelled job's hash expires)
 *   <p>{q}:processing:<worker>   LIST  ids the worker claimed and has not settled yet
 *   <p>{q}:worker:<worker>       STRING heartbeat, expires after the worker TTL unless refreshed
 *   <p>{q}:registry              HASH  worker id → JSON record (docs/worker.md#the-worker-registry), written by each
 *                                      worker's timer; the key expires once no worker has written it for the longest
 *                                      forget time given, and a forgotten worker's field is dropped by the next write
 *   <p>{q}:wake                  pub/sub channel: "a job was scheduled for <ms>", so blocked waiters re-plan
 *   <p>{q}:paused                HASH  task → JSON { at, by }: tasks no worker may start (docs/worker.md#pausing-a-task)
 *   <p>{q}:parked:<task>         LIST  ids of a paused task's jobs the claim set aside, oldest on the right; back
 *                                      on the ready list when the task resumes
 *   <p>{q}:limits                HASH  task → "<concurrency>|<max>|<perMs>" (empty when absent): the queue's limited
 *                                      tasks (docs/tasks.md#limits), written at start; a job over a limit is parked on
 *                                      its task's parked list
 *   <p>{q}:limit:holders:<task>  SET   ids of the task's jobs holding a concurrency slot (dropped by the claim once
 *                                      their job no longer runs under a live lease)
 *   <p>{q}:limit:starts:<task>   ZSET  "<id>@<ms>" → start time (ms): the task's starts within its rate window
 *   <p>{q}:limit:kholders:<task>:<key> SET  per-key concurrency (docs/flow-control.md#per-key-concurrency): ids of
 *                                      the key's jobs holding a slot; kparked:<task>:<key> LIST, the key's jobs parked
 *                                      at its limit (oldest on the right); kwaiting:<task> SET, the keys with parked jobs
 *                                      (for a task with fairness: kturnq:<task> ZSET, those keys by their turn)
 *   <p>{q}:unique:<key>          STRING "<how>|<job id>": the job holding a unique key scoped by task and tenant
 *                                      (enqueue-unique.lua); expires with its period when held for one
 *   <p>{q}:throughput:<minute>   HASH  "p|f|d:<task>" → jobs processed, failed, dead in the minute starting at
 *                                      <minute> (epoch ms); "r<b>|w<b>:<task>" → attempts whose run time or wait fell
 *                                      in log bucket <b> (core/latency-histogram.ts); expires after a day
 *   <p>{q}:throughput:h:<hour>   HASH  the same for the hour starting at <hour>; expires after 7 days
 *   <p>{q}:flow:<id>             HASH  a flow or batch (docs/redis.md#flows): name, kind, tenant, created_at, seq,
 *                                      total, completed, dead, stored (step hashes not pruned yet), cancelled,
 *                                      finished_at
 *   <p>{q}:flow:<id>:steps       LIST  its steps' job ids, parents first
 *   <p>{q}:flows                 ZSET  flow id → seq (creation order), for listFlows newest first
 *   <p>{q}:flows:seq             STRING the last seq given
 *   <p>{q}:waiting               ZSET  job id → due time (ms): flow steps waiting for their parents, for listings only
 * A flow step's job hash also has flow (its flow's id), children (JSON array of job ids), pending (parents not
 * finished yet), run ("1": onParentFailure "run") and counted ("1": its outcome was counted for its children).
 * lib.lua builds the flow key names from the ready list's name, as it does the ready lists of other priorities.
 */
export interface QueueKeys {
  /** The common stem `<prefix>{<queue>}`; every key below starts with it. */
  readonly stem: string;
  /** The ready list of priority-5 jobs, the default; `readyAt(p)` for every priority. */
  readonly ready: string;
  readonly scheduled: string;
  readonly running: string;
  readonly dead: string;
  readonly completed: string;
  readonly cancelled: string;
  readonly deadlines: string;
  readonly pruner: string;
  readonly workers: string;
  /** The worker registry (HASH), one field per worker process. */
  readonly registry: string;
  readonly paused: string;
  /** The queue's task limits (HASH); `limitPrefix` + "holders:<task>" / "starts:<task>" for a task's counts. */
  readonly limits: string;
  readonly limitPrefix: string;
  /** Pub/sub channel (not a key) announcing newly scheduled jobs to idle workers. */
  readonly wakeChannel: string;
  /** Prefixes the scripts append a job id or a worker id to. */
  readonly jobPrefix: string;
  readonly processingPrefix: string;
  readonly workerPrefix: string;
  readonly parkedPrefix: string;
  readonly uniquePrefix: string;
  readonly debouncePrefix: string;
  /** Flows by creation (ZSET) and the counter giving their order. */
  readonly flows: string;
  readonly flowSeq: string;
  readonly waiting: string;
  job(id: string): string;
  flow(id: string): string;
  flowSteps(id: string): string;
  /** The ready list of priority `priority` (0..9); lib.lua builds the same names. */
  readyAt(priority: number): string;
  /** Every ready list, priority 0 first. */
  readonly readyLists: readonly string[];
  processing(workerId: string): string;
  worker(workerId: string): string;
  parked(task: string): string;
  throughput(minuteMs: number): string;
  throughputHour(hourMs: number): string;
  /** The keys every script receives, in the order lib.lua reads them. */
  readonly scriptKeys: readonly string[];
  /** A SCAN pattern matching every key of this queue (tests and tooling; never used on a hot path). */
  readonly pattern: string;
}

export function queueKeys(params: { queue: string; prefix?: string }): QueueKeys {
  const { queue, prefix = "" } = params;
  if (!queue || /[{}]/.test(queue) || /[{}]/.test(prefix)) {
    // A brace would end the hash tag early and split the queue across slots.
    throw new TypeError(`a Redis queue name and prefix must be non-empty and free of braces, got queue "${queue}" prefix "${prefix}"`);
  }
  const stem = `${prefix}{${queue}}`;
  const keys = {
    stem,
    ready: `${stem}:ready`,
    scheduled: `${stem}:scheduled`,
    running: `${stem}:running`,
    dead: `${stem}:dead`,
    completed: `${stem}:completed`,
    cancelled: `${stem}:cancelled`,
    deadlines: `${stem}:deadlines`,
    pruner: `${stem}:pruner`,
    workers: `${stem}:workers`,
    registry: `${stem}:registry`,
    paused: `${stem}:paused`,
    limits: `${stem}:limits`,
    limitPrefix: `${stem}:limit:`,
    wakeChannel: `${stem}:wake`,
    jobPrefix: `${stem}:job:`,
    processingPrefix: `${stem}:processing:`,
    workerPrefix: `${stem}:worker:`,
    parkedPrefix: `${stem}:parked:`,
    uniquePrefix: `${stem}:unique:`,
    debouncePrefix: `${stem}:debounce:`,
    flows: `${stem}:flows`,
    flowSeq: `${stem}:flows:seq`,
    waiting: `${stem}:waiting`,
    job: (id: string) => `${stem}:job:${id}`,
    flow: (id: string) => `${stem}:flow:${id}`,
    flowSteps: (id: string) => `${stem}:flow:${id}:steps`,
    readyAt: (priority: number) => (priority === DEFAULT_PRIORITY ? `${stem}:ready` : `${stem}:ready:${priority}`),
    processing: (workerId: string) => `${stem}:processing:${workerId}`,
    worker: (workerId: string) => `${stem}:worker:${workerId}`,
    parked: (task: string) => `${stem}:parked:${task}`,
    throughput: (minuteMs: number) => `${stem}:throughput:${minuteMs}`,
    throughputHour: (hourMs: number) => `${stem}:throughput:h:${hourMs}`,
    pattern: `${escapeGlob(stem)}:*`,
  };
  return {
    ...keys,
    readyLists: Array.from({ length: MAX_PRIORITY + 1 }, (_, priority) => keys.readyAt(priority)),
    // The wake channel is not a key; scripts publish on it (lib.lua), and it shares the hash tag.
    scriptKeys: [keys.ready, keys.scheduled, keys.running, keys.dead, keys.completed, keys.workers, keys.wakeChannel],
  };
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
