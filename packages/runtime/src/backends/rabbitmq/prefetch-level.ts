/**
 * The consuming channel's prefetch, as the worker's claims ask for it (see Consumer): raised at once, lowered
 * only once the wanted level has stayed well below it for LOWER_AFTER_MS, and then to the highest level wanted
 * meanwhile.
 *
 * The wanted level follows the worker's finishing rate, sampled over windows of a few tens of milliseconds. A
 * pause of the process (a garbage collection, a slow handler) makes one sample low, and lowering at once would
 * follow it: the broker stops pushing until the unacked messages fall under the new limit, the worker's slots
 * wait for round trips, the next samples are lower still, and the prefetch swung between 1 000 and a few dozen
 * several times a second at concurrency 10 (each change a new consumer: see consumer.ts). Lowering exists so that a
 * worker whose jobs became slow stops holding many messages unacked (they count against the broker's
 * consumer_timeout); a second's delay changes nothing to that.
 */
export const LOWER_AFTER_MS = 1000;

export class PrefetchLevel {
  private current = 0;
  /** Since when every wanted level was well below `current` (null: the last one was not). */
  private lowSince: number | null = null;
  /** The highest level wanted since `lowSince`. */
  private lowPeak = 0;

  get value(): number {
    return this.current;
  }

  /** Takes a claim's wanted level at time `now` (ms); returns true when the prefetch changed. */
  want(level: number, now: number): boolean {
    if (level > this.current) {
      this.current = level;
      this.lowSince = null;
      return true;
    }
    if (level * 4 >= this.current * 3) {
      this.lowSince = null;
      return false;
    }
    if (this.lowSince === null) {
      this.lowSince = now;
      this.lowPeak = level;
      return false;
    }
    this.lowPeak = Math.max(this.lowPeak, level);
    if (now - this.lowSince < LOWER_AFTER_MS) return false;
    this.current = this.lowPeak;
    this.lowSince = null;
    return true;
  }
}
