import { randomFillSync } from "node:crypto";

/**
 * A new job's id: a version-7 UUID (RFC 9562), whose first 48 bits are the Unix time in milliseconds and the
 * rest random. Ids made close in time sort close together, so the PostgreSQL queue's primary key receives new
 * jobs at its right edge instead of on random pages all over the index: a batch of inserts, claims or
 * completions touches a few index pages instead of one per job. Ids stay opaque: nothing reads the time back.
 */
export function newJobId(now: number = Date.now()): string {
  const ms = Math.max(0, Math.floor(now)) % 2 ** 48;
  if (ms !== idMs) {
    writeHex(ms, 0, 8, 48 - 4);
    writeHex(ms, 9, 4, 16 - 4);
    idMs = ms;
  }
  if (randomOffset + RANDOM_PER_ID > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const r = randomOffset;
  randomOffset += RANDOM_PER_ID;
  // 74 random bits: 12 after the version, 2 in the variant (10xx: 8, 9, a or b), 60 after it.
  idBytes[15] = HEX[randomPool[r]! & 15]!;
  idBytes[16] = HEX[randomPool[r]! >> 4]!;
  idBytes[17] = HEX[randomPool[r + 1]! & 15]!;
  idBytes[19] = HEX[8 | (randomPool[r + 1]! >> 6)]!;
  idBytes[20] = HEX[randomPool[r + 2]! & 15]!;
  idBytes[21] = HEX[randomPool[r + 2]! >> 4]!;
  idBytes[22] = HEX[randomPool[r + 3]! & 15]!;
  for (let i = 0; i < 6; i++) {
    const byte = randomPool[r + 4 + i]!;
    idBytes[24 + 2 * i] = HEX[byte & 15]!;
    idBytes[25 + 2 * i] = HEX[byte >> 4]!;
  }
  return idBytes.toString("latin1", 0, 36);
}

/*
 * Ids are written into one 36-byte buffer and read out as a string in one call: building them from
 * randomUUID() and string slices cost about a microsecond and half a dozen short-lived strings per job, the
 * largest part of `new Job` in a bulk enqueue. The random bytes come from a pool refilled by the operating
 * system's generator (randomFillSync), as randomUUID's own buffering does; each byte is used once.
 */
const HEX = Buffer.from("0123456789abcdef", "latin1");
const RANDOM_PER_ID = 10;
const randomPool = Buffer.alloc(RANDOM_PER_ID * 1024);
let randomOffset = randomPool.length;
const idBytes = Buffer.from("00000000-0000-7000-8000-000000000000", "latin1");
/** The millisecond written in idBytes' time part (a batch makes thousands of ids in the same one). */
let idMs = -1;

/** Writes `digits` hex digits of `value` at `at`, the first one being bits `shift`..`shift + 3`. */
function writeHex(value: number, at: number, digits: number, shift: number): void {
  for (let i = 0; i < digits; i++, shift -= 4) idBytes[at + i] = HEX[Math.floor(value / 2 ** shift) & 15]!;
}

const V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The Unix time in milliseconds a version-7 UUID carries in its first 48 bits, or null for any other id. For an
 * id jfast generated it is the job's `createdAt`, to the millisecond, so a message may leave that field out.
 */
export function jobIdTime(id: string): number | null {
  const match = V7.exec(id);
  return match ? parseInt(match[1]! + match[2]!, 16) : null;
}
