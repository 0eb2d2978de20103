/**
 * One engine's flows under test (run-flows.ts): the same shapes of work for every subject, written with each
 * library's own API at its documented best, on one queue worked by one worker at a given concurrency.
 */
import { now } from "../lib/subject.js";

/** The shapes every subject enqueues; `count` flows of each, every step a no-op. */
export interface FlowSubject {
  readonly label: string;
  readonly settings: string;
  setup(): Promise<void>;
  /** `count` plain jobs, in as few calls as the library allows. */
  enqueuePlain(count: number): Promise<void>;
  /** `count` chains of `length` steps: each step after the one before. */
  enqueueChains(count: number, length: number): Promise<void>;
  /** `count` flows of `width` parallel steps and one join after all of them. */
  enqueueFanIns(count: number, width: number): Promise<void>;
  /** Starts one worker; the returned function stops it. */
  startWorker(concurrency: number): Promise<() => Promise<void>>;
  teardown(): Promise<void>;
}

/** Set by a join step's handler when it starts (after reading its parents' results, as a fan-in does). */
export const joins = { last: 0, count: 0 };
export function joinStarted(): void {
  joins.last = now();
  joins.count++;
}

/** Runs `calls` one-flow-at-a-time calls `parallel` at once (a library without a bulk call for flows). */
export async function inParallel(calls: number, parallel: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, calls) }, async () => {
      while (next < calls) await one(next++);
    }),
  );
}
