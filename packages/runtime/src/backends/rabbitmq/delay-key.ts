/**
 * The arithmetic of the delay cascade, kept pure so it is tested without a broker.
 *
 * Level n holds a message for 2^n units. A delay of D units is written in binary in the routing key, most
 * significant bit first, one word per level: 13 units in a 5-level cascade is `0.1.1.0.1`. Every level's
 * topic exchange looks at its own bit: 1 → its queue (wait 2^n units there), 0 → the next exchange down.
 * A message that expires from level n's queue is dead-lettered to level n-1's exchange with its key
 * unchanged, so it keeps descending; the time spent is the sum of the levels whose bit is 1, i.e. D units.
 *
 * Binding patterns have one word per level (`*.1.*.*` is "bit 2 is 1" in a 4-level cascade). The level count is
 * also pinned by the key level 0 dead-letters with (see topology.ts), which the broker compares on redeclaration.
 */

export interface CascadeShape {
  /** Length of one unit in milliseconds (level 0's TTL). */
  unitMs: number;
  /** Number of levels; the longest delay the cascade holds is 2^levels - 1 units. */
  levels: number;
}

export const DEFAULT_CASCADE: CascadeShape = { unitMs: 100, levels: 25 };

/** RabbitMQ refuses an x-message-ttl above 2^32 - 1 ms. */
const MAX_TTL_MS = 2 ** 32 - 1;

/** Throws a RangeError naming what is wrong with a cascade shape. */
export function assertCascadeShape({ unitMs, levels }: CascadeShape): void {
  if (!Number.isInteger(unitMs) || unitMs < 1) throw new RangeError(`the delay unit must be a whole number of milliseconds ≥ 1 (got ${unitMs})`);
  if (!Number.isInteger(levels) || levels < 1 || levels > 40) throw new RangeError(`the cascade needs 1 to 40 levels (got ${levels})`);
  if (levelTtlMs(levels - 1, unitMs) > MAX_TTL_MS) {
    throw new RangeError(
      `a cascade of ${levels} levels of ${unitMs} ms needs a top-level TTL of ${levelTtlMs(levels - 1, unitMs)} ms, above RabbitMQ's limit of ${MAX_TTL_MS} ms`,
    );
  }
}

export function levelTtlMs(level: number, unitMs: number): number {
  return unitMs * 2 ** level;
}

/** The most units the cascade holds in one pass: every level's bit set. */
export function maxUnits(levels: number): number {
  return 2 ** levels - 1;
}

/** Units for a delay, rounded up so a job is never early. Zero or negative delays are zero units. */
export function delayUnits(delayMs: number, unitMs: number): number {
  if (!(delayMs > 0)) return 0;
  return Math.ceil(delayMs / unitMs);
}

/** The routing key for `units`: one word per level, most significant first. */
export function routingKey(units: number, levels: number): string {
  if (!Number.isInteger(units) || units < 0 || units > maxUnits(levels)) {
    throw new RangeError(`${units} units do not fit a cascade of ${levels} levels (0 to ${maxUnits(levels)})`);
  }
  const words: string[] = [];
  for (let level = levels - 1; level >= 0; level--) words.push(Math.floor(units / 2 ** level) % 2 === 1 ? "1" : "0");
  return words.join(".");
}

/** Inverse of routingKey; null when the key is not a cascade key. */
export function decodeRoutingKey(key: string): number | null {
  const words = key.split(".");
  let units = 0;
  for (const word of words) {
    if (word !== "0" && word !== "1") return null;
    units = units * 2 + (word === "1" ? 1 : 0);
  }
  return units;
}

/** Binding from level n's exchange to its own queue: bit n is 1. */
export function holdPattern(level: number, levels: number): string {
  return bitPattern(level, levels, "1");
}

/** Binding from level n's exchange down to level n-1's exchange (or, at level 0, the work queue): bit n is 0. */
export function passPattern(level: number, levels: number): string {
  return bitPattern(level, levels, "0");
}

/**
 * One word per level, `*` everywhere but level n's own. No `#`: a leading `#` makes the broker's topic matcher
 * try every split of the key at every exchange, which made a 22-hop publish cost ~100 ms on a busy broker.
 * A key of another length matches nothing, so a message from a cascade of another shape is returned to its
 * publisher (mandatory) instead of being routed wrongly.
 */
function bitPattern(level: number, levels: number, bit: "0" | "1"): string {
  if (!Number.isInteger(level) || level < 0 || level >= levels) throw new RangeError(`level ${level} is outside a cascade of ${levels} levels`);
  const words = Array<string>(levels).fill("*");
  words[levels - 1 - level] = bit;
  return words.join(".");
}

export interface DelayPlan {
  units: number;
  routingKey: string;
  /** The level whose exchange the message is published to: its highest bit set (see planDelay). */
  entryLevel: number;
  /** The delay is longer than the cascade: it rides at maximum and carries its due time in a header. */
  overflow: boolean;
}

/**
 * How a delay of `delayMs` travels: its units and key, clamped to the cascade's maximum when longer, and the
 * level it enters at. It enters at its highest bit set rather than at the top: the exchanges above it would
 * only pass it down (their bits are 0), and each topic exchange a message crosses costs the broker real CPU
 * (measured on a busy 2-core host: 100 messages took 2.2 s through 25 exchanges, 0.16 s through one). The
 * key is the same either way, so where it is first held, and for how long, does not change.
 */
export function planDelay(delayMs: number, shape: CascadeShape): DelayPlan {
  const wanted = delayUnits(delayMs, shape.unitMs);
  const max = maxUnits(shape.levels);
  const units = Math.min(wanted, max);
  return { units, routingKey: routingKey(units, shape.levels), entryLevel: highestLevel(units), overflow: wanted > max };
}

/** The highest level whose bit is set (0 for zero units: level 0's exchange sends an all-zero key to the work queue). */
export function highestLevel(units: number): number {
  return units <= 1 ? 0 : Math.floor(Math.log2(units));
}

/** The levels a message with this many units waits in, top first (for docs, tests and debugging). */
export function levelsHolding(units: number, levels: number): number[] {
  const held: number[] = [];
  for (let level = levels - 1; level >= 0; level--) if (Math.floor(units / 2 ** level) % 2 === 1) held.push(level);
  return held;
}
