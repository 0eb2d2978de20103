import type { Job } from "../core/job.js";
import type { PausedTaskSet } from "../core/pause.js";
import type { SlotOffer } from "../core/queue-backend.js";
import type { Slots } from "./slots.js";

/**
 * What an idle worker offers a backend that hands jobs over in process (QueueBackend.offerSlots): its free slots,
 * never its prefetch buffer (the point is the latency of a job for a worker with nothing to do). Stopping, it
 * offers none; shutdown waits for hand-offs in flight before it releases the buffer, their jobs included.
 */
export function createSlotOffer(params: {
  workerId: string;
  leaseMs: number;
  paused: PausedTaskSet | undefined;
  slots: Slots;
  stopping(): boolean;
  delivered(jobs: Job[]): void;
}): SlotOffer {
  const { slots } = params;
  return {
    workerId: params.workerId,
    leaseMs: params.leaseMs,
    pausedTasks: () => params.paused?.names() ?? [],
    reserve: (wanted) => (params.stopping() ? 0 : slots.reserve(wanted)),
    deliver: (jobs, reserved) => {
      slots.settleReserved(reserved);
      params.delivered(jobs);
    },
    cancel: (reserved) => slots.settleReserved(reserved),
  };
}
