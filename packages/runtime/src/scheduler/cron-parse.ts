import { CronPattern } from "croner";
import { cronError, type ScheduleError } from "./schedule-error.js";

/**
 * A parsed five-field cron expression. croner parses it; the tables below are croner's, re-indexed by value.
 * The scheduler and `jfast schedule next` both call this one function.
 */
export interface CronExpression {
  /** The text as written. */
  readonly source: string;
  /** The five fields after expanding a macro (`@daily` → `0 0 * * *`). */
  readonly fields: string;
  readonly minutes: readonly boolean[];
  readonly hours: readonly boolean[];
  /** Indexed 1..31. */
  readonly daysOfMonth: readonly boolean[];
  /** Indexed 1..12. */
  readonly months: readonly boolean[];
  /** Indexed 0..6, Sunday = 0 (7 is read as Sunday too). */
  readonly daysOfWeek: readonly boolean[];
  /**
   * Vixie cron: when both day fields are restricted a day matches if EITHER does; when either field starts
   * with `*` (including `*\/2`) a day must match both. "Restricted" is Vixie's test, the first character.
   */
  readonly daysOred: boolean;
  /** Every hour of the day matches (`*`, `*\/1`, `0-23`): a repeated wall hour then fires in both occurrences. */
  readonly everyHour: boolean;
}

interface FieldSpec {
  label: string;
  min: number;
  max: number;
  /** Only for messages: croner reads the names. */
  names?: string;
}

const FIELDS: FieldSpec[] = [
  { label: "minute", min: 0, max: 59 },
  { label: "hour", min: 0, max: 23 },
  { label: "day-of-month", min: 1, max: 31 },
  { label: "month", min: 1, max: 12, names: "jan feb mar apr may jun jul aug sep oct nov dec" },
  { label: "day-of-week", min: 0, max: 7, names: "sun mon tue wed thu fri sat" },
];

/** Vixie's macros, expanded here so croner only ever sees five fields. */
const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const DAYS_IN_MONTH_MAX = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Seconds and years are refused: a sixth or seventh field is an error, not a different expression. */
const CRONER_OPTIONS = { mode: "5-part" } as const;

export function parseCron(expression: string): CronExpression {
  if (typeof expression !== "string" || expression.trim() === "") {
    throw cronError(String(expression), "is empty");
  }
  const source = expression;
  const text = expression.trim();
  let fieldsText = text;
  if (text.startsWith("@")) {
    const macro = MACROS[text.toLowerCase()];
    if (!macro) {
      const reason = text.toLowerCase() === "@reboot" ? "@reboot has no time to compute" : `${text} is not a known macro`;
      throw cronError(source, reason);
    }
    fieldsText = macro;
  }
  const parts = fieldsText.split(/\s+/);
  if (parts.length === 6 || parts.length === 7) {
    throw cronError(source, `has ${parts.length} fields; a seconds (or year) field is not accepted`);
  }
  if (parts.length !== 5) {
    throw cronError(source, `has ${parts.length} field${parts.length === 1 ? "" : "s"}; five are needed`);
  }
  refuseExtensions(source, parts);
  let pattern: CronPattern;
  try {
    pattern = new CronPattern(parts.join(" "), undefined, CRONER_OPTIONS);
  } catch (error) {
    throw explainRefusal(source, parts, error);
  }

  // croner's tables index days of the month and months from 0.
  const cron: CronExpression = {
    source,
    fields: parts.join(" "),
    minutes: pattern.minute.map(Boolean),
    hours: pattern.hour.map(Boolean),
    daysOfMonth: [false, ...pattern.day.map(Boolean)],
    months: [false, ...pattern.month.map(Boolean)],
    daysOfWeek: pattern.dayOfWeek.slice(0, 7).map(Boolean),
    daysOred: !parts[2]!.startsWith("*") && !parts[4]!.startsWith("*"),
    everyHour: pattern.hour.every(Boolean),
  };
  if (!canEverMatch(cron)) {
    throw cronError(source, "never fires: no month in it has that day of the month");
  }
  return cron;
}

/**
 * croner also reads Quartz's `? L W #` and the `+` that ANDs the day fields. We refuse them: a five-field
 * expression then means what it means in Vixie cron, everywhere it is read. No day name has an L in it.
 */
function refuseExtensions(source: string, parts: string[]): void {
  if (parts.some((part) => part.includes("?"))) {
    throw cronError(source, 'the Quartz "?" is not accepted; use * for "any"');
  }
  for (const item of parts.flatMap((part) => part.split(","))) {
    if (item.includes("#")) throw cronError(source, `the Quartz "#" (nth weekday of the month) in "${item}" is not accepted`);
  }
  for (const item of parts[2]!.split(",")) {
    const lower = item.toLowerCase();
    if (/[lw]/.test(lower)) {
      throw cronError(source, `the Quartz "${lower.includes("w") ? "W" : "L"}" in the day-of-month field ("${item}") is not accepted`);
    }
  }
  for (const item of parts[4]!.split(",")) {
    if (/l/i.test(item)) {
      throw cronError(source, `the Quartz "L" (last weekday of the month) in the day-of-week field ("${item}") is not accepted`);
    }
    if (item.includes("+")) {
      throw cronError(source, `the "+" in the day-of-week field ("${item}") is not accepted; the day fields combine as in Vixie cron`);
    }
  }
}

/**
 * croner refused the expression; say which field and item, in the words of the accepted syntax. croner is
 * asked about one item at a time (every other field `*`), so the item named is the one it refuses.
 */
function explainRefusal(source: string, parts: string[], error: unknown): ScheduleError {
  for (const [index, part] of parts.entries()) {
    const spec = FIELDS[index]!;
    for (const item of part.split(",")) {
      if (item === "") return cronError(source, `the ${spec.label} field "${part}" has an empty list item`);
      const refusal = cronerRefusal(parts.map((other, i) => (i === index ? item : "*")).join(" "));
      if (refusal !== null) return describeRefusal(source, spec, item, refusal);
    }
  }
  return cronError(source, cronerMessage(error));
}

function cronerRefusal(pattern: string): string | null {
  try {
    new CronPattern(pattern, undefined, CRONER_OPTIONS);
    return null;
  } catch (error) {
    return cronerMessage(error);
  }
}

function cronerMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, "");
}

/** croner's refusal, matched on the wording of the pinned croner version (the parser tests pin each case). */
function describeRefusal(source: string, spec: FieldSpec, item: string, refusal: string): ScheduleError {
  const { label, min, max } = spec;
  const top = label === "day-of-week" ? 6 : max;
  if (/^Invalid value for /.test(refusal)) {
    const outside = (item.match(/\d+/g) ?? []).map(Number).find((n) => n < min || n > max);
    return cronError(source, `the ${label} field has ${outside ?? `"${item}"`}, outside ${min}-${max}`);
  }
  if (/^From value is larger than to value/.test(refusal)) {
    const range = item.split("/")[0]!;
    const [a, b] = range.split("-") as [string, string];
    return cronError(source, `the ${label} range ${range} runs backwards; write ascending ranges, e.g. ${b}-${max},${min}-${a}`);
  }
  if (/stepping with (numeric|missing) prefix/.test(refusal)) {
    // Implementations disagree on "5/20" (just 5? 5 to the end?); ask for the form everyone reads alike.
    const [base, step] = item.split("/") as [string, string];
    const example = base === "" ? `*/${step}` : `${base}-${top}/${step}`;
    return cronError(source, `the ${label} field has "${item}"; a step goes after * or a range, e.g. ${example}`);
  }
  if (/stepping|steps/.test(refusal)) {
    return cronError(source, `the ${label} field has "${item}"; a step is a whole number from 1 to ${top - min + 1}`);
  }
  if (/illegal characters|has to stand alone|is not a number|\(NaN\)/.test(refusal)) {
    const names = spec.names ? ` (names: ${spec.names})` : "";
    return cronError(source, `the ${label} field has "${item}", which is not a number ${min}-${max}${names}`);
  }
  return cronError(source, `the ${label} field has "${item}", which is not a value, range or step (${refusal})`);
}

/** An expression such as "0 0 30 2 *" parses but never fires; refuse it instead of scheduling nothing. */
function canEverMatch(cron: CronExpression): boolean {
  if (cron.daysOred) return true;
  for (let month = 1; month <= 12; month++) {
    if (!cron.months[month]) continue;
    for (let day = 1; day <= DAYS_IN_MONTH_MAX[month]!; day++) {
      // With a day-of-week restriction too, weekdays rotate through every date over the years.
      if (cron.daysOfMonth[day] && cron.daysOfWeek.some(Boolean)) return true;
    }
  }
  return false;
}
