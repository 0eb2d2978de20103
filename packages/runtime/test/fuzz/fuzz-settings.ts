import { appendFileSync } from "node:fs";

/**
 * How much the fuzz suites try, read in this one place. In CI (nothing set) each backend gets a bounded number of
 * cases under a seed drawn per run; `npm run fuzz` sets FUZZ_RUNS for long runs. FUZZ_SEED replays a run: a
 * failure prints the seed (and fast-check's path) to pass back.
 *   FUZZ_SEED    integer seed (default: drawn, and printed)
 *   FUZZ_RUNS    cases per backend suite (default: each suite's CI share)
 *   FUZZ_REPORT  file to append one JSON line of figures per suite to (RELIABILITY.md is written from it)
 */
const seedText = process.env.FUZZ_SEED;
const runsText = process.env.FUZZ_RUNS;

export const FUZZ_SEED: number = seedText ? Number.parseInt(seedText, 10) : Math.floor(Math.random() * 2 ** 31);
const runsOverride: number | null = runsText ? Number.parseInt(runsText, 10) : null;
const reportFile: string | null = process.env.FUZZ_REPORT || null;

if (!Number.isSafeInteger(FUZZ_SEED)) throw new Error(`FUZZ_SEED must be an integer, not ${JSON.stringify(seedText)}`);
if (runsOverride !== null && !(runsOverride > 0)) throw new Error(`FUZZ_RUNS must be a positive integer, not ${JSON.stringify(runsText)}`);

/**
 * The number of cases a suite runs: its share of the CI budget, or FUZZ_RUNS when set. A suite whose cases cost
 * far more than others' (the CLI starts processes) runs `scale` of FUZZ_RUNS, never fewer than its CI share.
 */
export function fuzzRuns(ciShare: number, scale = 1): number {
  return runsOverride === null ? ciShare : Math.max(ciShare, Math.round(runsOverride * scale));
}

/** What a failure has to say to be replayed. */
export function replayHint(): string {
  return `replay with FUZZ_SEED=${FUZZ_SEED}${runsOverride ? ` FUZZ_RUNS=${runsOverride}` : ""}`;
}

export interface FuzzFigures {
  suite: string;
  seed: number;
  cases: number;
  /** Inputs tried: jobs made (or refused), rows/messages written past the runtime. */
  inputs: number;
  refused: number;
  completed: number;
  dead: number;
  quarantined: number;
  retried: number;
  discarded: number;
  lost: number;
}

/** What a garbage-on-the-wire suite tried: rows, hashes or messages written past the runtime, and their ends. */
export interface GarbageFigures {
  kind: "garbage";
  suite: string;
  inputs: number;
  /** Read as jobs and run. */
  completed: number;
  /** Set aside with their reason: dead letters, or (Kafka) a partition reported blocked. */
  quarantined: number;
  lost: number;
}

/** Prints a suite's figures, and appends them to FUZZ_REPORT when set (scripts/fuzz.mjs writes RELIABILITY.md from them). */
export function reportFigures(figures: FuzzFigures | GarbageFigures): void {
  console.log(`fuzz ${figures.suite}: ${JSON.stringify(figures)}`);
  if (reportFile) appendFileSync(reportFile, `${JSON.stringify(figures)}\n`);
}
