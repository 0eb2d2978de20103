import { cronError } from "./schedule-error.js";

/**
 * A parsed five-field cron expression. Each field is a membership table indexed by value, so matching a
 * wall-clock time is five lookups. The parser is the only one in the project: the scheduler and
 * `jfast schedule next` both call it.
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

const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface FieldSpec {
  label: string;
  min: number;
  max: number;
  names?: string[];
  /** First value the names map to (months start at 1). */
  nameBase?: number;
}

const FIELDS: FieldSpec[] = [
  { label: "minute", min: 0, max: 59 },
  { label: "hour", min: 0, max: 23 },
  { label: "day-of-month", min: 1, max: 31 },
  { label: "month", min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  // 7 is accepted as Sunday and folded onto 0 after parsing.
  { label: "day-of-week", min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

const DAYS_IN_MONTH_MAX = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

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
  if (fieldsText.includes("?")) {
    throw cronError(source, 'the Quartz "?" is not accepted; use * for "any"');
  }
  const parts = fieldsText.split(/\s+/);
  if (parts.length === 6 || parts.length === 7) {
    throw cronError(source, `has ${parts.length} fields; a seconds (or year) field is not accepted`);
  }
  if (parts.length !== 5) {
    throw cronError(source, `has ${parts.length} field${parts.length === 1 ? "" : "s"}; five are needed`);
  }
  const tables = parts.map((part, index) => parseField(source, part, FIELDS[index]!));
  const [minutes, hours, daysOfMonth, months, daysOfWeek7] = tables as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  const daysOfWeek = daysOfWeek7.slice(0, 7);
  if (daysOfWeek7[7]) daysOfWeek[0] = true;

  const cron: CronExpression = {
    source,
    fields: parts.join(" "),
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
    daysOred: !parts[2]!.startsWith("*") && !parts[4]!.startsWith("*"),
    everyHour: hours.every(Boolean),
  };
  if (!canEverMatch(cron)) {
    throw cronError(source, "never fires: no month in it has that day of the month");
  }
  return cron;
}

function parseField(source: string, text: string, spec: FieldSpec): boolean[] {
  const table = new Array<boolean>(spec.max + 1).fill(false);
  for (const item of text.split(",")) {
    if (item === "") throw cronError(source, `the ${spec.label} field "${text}" has an empty list item`);
    rejectQuartz(source, item, spec);
    const match = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/(\d+))?$/i.exec(item);
    if (!match) throw cronError(source, `the ${spec.label} field has "${item}", which is not a value, range or step`);
    const [, base, stepText] = match as unknown as [string, string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) {
      throw cronError(source, `the ${spec.label} field has step "/${stepText}"; a step is a whole number of at least 1`);
    }
    let low: number;
    let high: number;
    if (base === "*") {
      low = spec.min;
      high = spec.label === "day-of-week" ? 6 : spec.max;
    } else if (base.includes("-")) {
      const [a, b] = base.split("-") as [string, string];
      low = value(source, a, spec);
      high = value(source, b, spec);
      if (low > high) {
        throw cronError(source, `the ${spec.label} range ${base} runs backwards; write ascending ranges, e.g. ${b}-${spec.max},${spec.min}-${a}`);
      }
    } else {
      if (stepText !== undefined) {
        // Implementations disagree on "5/20" (just 5? 5 to the end?); ask for the form everyone reads alike.
        throw cronError(source, `the ${spec.label} field has "${item}"; a step goes after * or a range, e.g. ${base}-${spec.label === "day-of-week" ? 6 : spec.max}/${stepText}`);
      }
      low = value(source, base, spec);
      high = low;
    }
    for (let v = low; v <= high; v += step) table[v] = true;
  }
  return table;
}

function value(source: string, token: string, spec: FieldSpec): number {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < spec.min || n > spec.max) {
      throw cronError(source, `the ${spec.label} field has ${n}, outside ${spec.min}-${spec.max}`);
    }
    return n;
  }
  const index = spec.names?.indexOf(token.toLowerCase()) ?? -1;
  if (index < 0) {
    const names = spec.names ? ` (names: ${spec.names.join(" ")})` : "";
    throw cronError(source, `the ${spec.label} field has "${token}", which is not a number ${spec.min}-${spec.max}${names}`);
  }
  return index + (spec.nameBase ?? 0);
}

/** Quartz extensions look like values to a loose parser; name them so the message explains the refusal. */
function rejectQuartz(source: string, item: string, spec: FieldSpec): void {
  const lower = item.toLowerCase();
  if (lower.includes("#")) {
    throw cronError(source, `the Quartz "#" (nth weekday of the month) in "${item}" is not accepted`);
  }
  if (spec.label === "day-of-month" && /^(l|lw|l-\d+|\d+w)$/.test(lower)) {
    throw cronError(source, `the Quartz "${/w$/.test(lower) ? "W" : "L"}" in the day-of-month field ("${item}") is not accepted`);
  }
  if (spec.label === "day-of-week" && /^(l|[0-7]l|[a-z]{3}l)$/.test(lower)) {
    throw cronError(source, `the Quartz "L" (last weekday of the month) in the day-of-week field ("${item}") is not accepted`);
  }
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
