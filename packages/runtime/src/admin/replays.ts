import { randomUUID } from "node:crypto";
import { JfastError } from "../errors/jfast-error.js";
import type { Redaction } from "./redact.js";
import type { QueueProvider } from "../queue/queue-provider.js";
import type { Logger } from "../observability/logger.js";
import { SCAN_BUDGET, scanDead, type DeadFilter } from "./dead-scan.js";

/** A throttled bulk retry running in this process (deadLetters.retryMatching), as deadLetters.replays shows it. */
export interface ReplayView {
  replayId: string;
  /** The filter as given (null: every dead letter). */
  filter: Record<string, unknown> | null;
  /** Dead letters that matched when it started; `totalExact: false` when counting stopped at the scan budget. */
  total: number;
  totalExact: boolean;
  /** Requeued so far. */
  done: number;
  /** Selected but not requeued (retried or discarded by someone else meanwhile). */
  failed: number;
  ratePerSecond: number;
  startedAt: string;
  finishedAt: string | null;
  by: string;
  state: "running" | "finished" | "stopped";
  /** Why it stopped before the end (the queue closed, the backend failed). */
  error: string | null;
}

/** How many finished replays are kept for deadLetters.replays (running ones are always listed). */
const KEEP = 20;
/**
 * Replays running at once in one process. Each reads and requeues dead letters on its own; thirty started in one
 * batched request multiplied the load on the queue thirtyfold. Another is refused until one ends.
 */
export const MAX_RUNNING_REPLAYS = 2;
/** A replay requeues in slices, at most this many per slice and at least ten slices per second at high rates. */
const MAX_SLICE = 200;

export interface ReplayLog {
  start(params: {
    queue: () => QueueProvider | null;
    filter: DeadFilter;
    shownFilter: Record<string, unknown> | null;
    total: number;
    totalExact: boolean;
    ratePerSecond: number;
    by: string;
    /** What the filter is matched against (the dead letters as the operator saw them). */
    redaction?: Redaction | undefined;
    /** Called once at the end with the ids it requeued (for the audit trail). */
    onFinish?: (view: ReplayView, ids: string[]) => Promise<void>;
  }): ReplayView;
  recent(): ReplayView[];
  /**
   * Stops a running replay after the slice in flight (deadLetters.stopReplay): what it requeued stays requeued, the
   * rest stays dead. Null when no replay of this process has the id; its view as it was when not running.
   */
  stop(params: { replayId: string; by: string }): ReplayView | null;
  /** Replays running now; `start` refuses another when there are MAX_RUNNING_REPLAYS. */
  running(): number;
}

/**
 * Replays run in the service, in the background of the call that started them, so a retry of 100 000 dead
 * letters neither holds an HTTP request open nor stampedes the workers: slices of at most MAX_SLICE, paced to
 * `ratePerSecond`. A replay covers the dead letters that died before it started (a job that dies again during
 * the replay is not replayed twice) and that match its filter; it reads them newest first, SCAN_BUDGET at most
 * per slice, and ends at the end of the list. Kept in memory: a replay stops with its process (and says so only
 * there); the audit trail has its start and its end.
 */
export function createReplayLog(params: { logger: Logger }): ReplayLog {
  const replays: ReplayView[] = [];
  /** Replays asked to stop, by id, with who asked. */
  const stopping = new Map<string, string>();
  return {
    start(options) {
      // Checked here, synchronously, as well as before counting: two calls may both have counted meanwhile.
      if (running() >= MAX_RUNNING_REPLAYS) throw replaysBusy();
      const view: ReplayView = {
        replayId: randomUUID(),
        filter: options.shownFilter,
        total: options.total,
        totalExact: options.totalExact,
        done: 0,
        failed: 0,
        ratePerSecond: options.ratePerSecond,
        startedAt: new Date().toISOString(),
        finishedAt: null,
        by: options.by,
        state: "running",
        error: null,
      };
      replays.unshift(view);
      trim(replays);
      void run(view, options, () => stopping.get(view.replayId) ?? null)
        .finally(() => stopping.delete(view.replayId))
        .catch((error: unknown) => params.logger.error("a dead-letter replay failed", { error, replay_id: view.replayId }));
      return { ...view };
    },
    recent() {
      return replays.slice(0, KEEP).map((r) => ({ ...r }));
    },
    stop({ replayId, by }) {
      const view = replays.find((r) => r.replayId === replayId);
      if (!view) return null;
      if (view.state === "running") stopping.set(replayId, by);
      return { ...view };
    },
    running,
  };
  function running(): number {
    return replays.filter((r) => r.state === "running").length;
  }
}

export function replaysBusy(): JfastError {
  return new JfastError(`${MAX_RUNNING_REPLAYS} dead-letter replays are already running in this service`, {
    code: "REPLAYS_BUSY",
    hint: "wait for one to end: deadLetters.replays lists them with their progress",
    docs: "jfast docs admin-api#throttled-replay",
  });
}

function trim(replays: ReplayView[]): void {
  let finished = 0;
  for (let i = 0; i < replays.length; i++) {
    if (replays[i]!.state === "running") continue;
    if (++finished > KEEP) replays.splice(i--, 1);
  }
}

async function run(view: ReplayView, options: Parameters<ReplayLog["start"]>[0], stopRequested: () => string | null): Promise<void> {
  const original = options.queue();
  const slice = Math.max(1, Math.min(MAX_SLICE, Math.ceil(options.ratePerSecond / 10)));
  const filter: DeadFilter = { ...options.filter, diedBefore: view.startedAt };
  const requeued: string[] = [];
  let offset = 0;
  let end: Pick<ReplayView, "state" | "error">;
  try {
    for (;;) {
      const stoppedBy = stopRequested();
      if (stoppedBy !== null) throw new Error(`stopped by ${stoppedBy}`);
      const queue = options.queue();
      if (!queue || queue !== original) throw new Error("the queue closed (the service stopped); start the replay again");
      const began = Date.now();
      const scan = await scanDead(queue.backend, { filter, offset, want: slice, budget: SCAN_BUDGET, redaction: options.redaction });
      const ids = scan.rows.map((d) => d.job.id);
      if (ids.length > 0) {
        const { retried, missing } = await queue.backend.retryDead({ ids });
        view.done += retried.length;
        view.failed += missing.length;
        requeued.push(...retried);
      }
      if (view.done + view.failed > view.total) view.total = view.done + view.failed;
      if (scan.nextOffset === null && !scan.budgetReached) break;
      // The matches left the list; what the scan passed over stays where it was.
      offset = (scan.nextOffset ?? offset + scan.scanned) - ids.length;
      const due = (ids.length / options.ratePerSecond) * 1000 - (Date.now() - began);
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due).unref());
    }
    end = { state: "finished", error: null };
  } catch (error) {
    end = { state: "stopped", error: (error as Error).message };
  }
  // Shown as ended only once its end is in the audit trail.
  const ended: ReplayView = { ...view, ...end, finishedAt: new Date().toISOString() };
  let unrecorded: unknown = null;
  await options.onFinish?.(ended, requeued).catch((error: unknown) => (unrecorded = error));
  Object.assign(view, ended);
  if (unrecorded) throw unrecorded;
}
