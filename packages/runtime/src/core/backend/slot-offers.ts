import type { Job } from "../job.js";
import type { SlotOffer } from "./protocol.js";

/** Which idle worker of this process each job of a batch goes to (undefined: stored ready), and how many slots each granted. */
export interface SlotReservation {
  handedTo: Array<SlotOffer | undefined>;
  reserved: Map<SlotOffer, number>;
}

/**
 * The first step of an in-process hand-off (JobProtocol.offerSlots), the same for every backend that offers
 * one: the jobs of a batch that are due now and whose task the worker has not paused go, in batch order, to
 * the idle workers' free slots, reserved at once (a claim the worker makes while the write is in flight leaves
 * them free). `accepts` leaves out a worker the backend cannot hand jobs to yet. The backend then writes the
 * batch and calls each offer's `deliver` or `cancel` with its count.
 */
export function reserveSlots(offers: Iterable<SlotOffer>, jobs: readonly Job[], now: number, accepts: (offer: SlotOffer) => boolean = () => true): SlotReservation {
  const handedTo = new Array<SlotOffer | undefined>(jobs.length);
  const reserved = new Map<SlotOffer, number>();
  for (const offer of offers) {
    if (!accepts(offer)) continue;
    const paused = offer.pausedTasks();
    const eligible: number[] = [];
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!;
      if (handedTo[i] === undefined && job.availableAt.getTime() <= now && !paused.includes(job.task)) eligible.push(i);
    }
    if (eligible.length === 0) continue;
    const granted = offer.reserve(eligible.length);
    if (granted === 0) continue;
    reserved.set(offer, granted);
    for (const i of eligible.slice(0, granted)) handedTo[i] = offer;
  }
  return { handedTo, reserved };
}

/** The idle workers of this process offering their free slots (`offerSlots`), as each hand-off backend keeps them. */
export class SlotOffers {
  private readonly offers = new Set<SlotOffer>();

  get size(): number {
    return this.offers.size;
  }

  /** `offerSlots`: the offer is open until the returned withdrawal. */
  add(offer: SlotOffer): () => void {
    this.offers.add(offer);
    return () => this.offers.delete(offer);
  }

  reserve(jobs: readonly Job[], now: number, accepts?: (offer: SlotOffer) => boolean): SlotReservation {
    return reserveSlots(this.offers, jobs, now, accepts);
  }
}
