import { describe, expect, it } from "vitest";
import { parseCron } from "./cron-parse.js";
import { nextCronTick } from "./next-tick.js";
import { ScheduleError } from "./schedule-error.js";
import { nextCronTicks } from "./trigger.js";

const values = (table: readonly boolean[]) => table.flatMap((on, i) => (on ? [i] : []));

/** The next `count` ticks in UTC, as ISO strings. */
function ticks(expression: string, afterIso: string, count: number, zone = "UTC"): string[] {
  const cron = parseCron(expression);
  const out: string[] = [];
  let after = Date.parse(afterIso);
  for (let i = 0; i < count; i++) {
    after = nextCronTick(cron, zone, after)!;
    out.push(new Date(after).toISOString());
  }
  return out;
}

function rejection(expression: string): ScheduleError {
  try {
    parseCron(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(ScheduleError);
    return error as ScheduleError;
  }
  throw new Error(`"${expression}" was accepted`);
}

describe("parseCron", () => {
  it("reads *, lists, ranges and steps", () => {
    const cron = parseCron("*/15 9-17/4 1,15,31 * *");
    expect(values(cron.minutes)).toEqual([0, 15, 30, 45]);
    expect(values(cron.hours)).toEqual([9, 13, 17]);
    expect(values(cron.daysOfMonth)).toEqual([1, 15, 31]);
    expect(values(cron.months)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(values(parseCron("0-10/5,50 * * * *").minutes)).toEqual([0, 5, 10, 50]);
    expect(rejection("5/20 * * * *").message).toContain('a step goes after * or a range, e.g. 5-59/20');
  });

  it("reads month and day names in any case, in ranges and lists", () => {
    const cron = parseCron("0 8 * JAN-mar,Dec mon-FRI");
    expect(values(cron.months)).toEqual([1, 2, 3, 12]);
    expect(values(cron.daysOfWeek)).toEqual([1, 2, 3, 4, 5]);
    expect(values(parseCron("0 0 * jul sat,sun").daysOfWeek)).toEqual([0, 6]);
  });

  it("reads 7 as Sunday", () => {
    expect(values(parseCron("0 0 * * 7").daysOfWeek)).toEqual([0]);
    expect(values(parseCron("0 0 * * 5-7").daysOfWeek)).toEqual([0, 5, 6]);
  });

  it("expands the macros", () => {
    expect(parseCron("@hourly").fields).toBe("0 * * * *");
    expect(parseCron("@daily").fields).toBe("0 0 * * *");
    expect(parseCron("@weekly").fields).toBe("0 0 * * 0");
    expect(parseCron("@monthly").fields).toBe("0 0 1 * *");
    expect(parseCron("@yearly").fields).toBe("0 0 1 1 *");
    expect(parseCron("@annually").fields).toBe("0 0 1 1 *");
    expect(ticks("@weekly", "2024-05-01T00:00:00Z", 2)).toEqual(["2024-05-05T00:00:00.000Z", "2024-05-12T00:00:00.000Z"]);
  });

  it("ORs day-of-month and day-of-week when both are restricted (Vixie)", () => {
    // Friday the 13th style: every 13th AND every Friday, not only Fridays that fall on the 13th.
    expect(ticks("0 0 13 * fri", "2024-09-01T00:00:00Z", 4)).toEqual([
      "2024-09-06T00:00:00.000Z",
      "2024-09-13T00:00:00.000Z",
      "2024-09-20T00:00:00.000Z",
      "2024-09-27T00:00:00.000Z",
    ]);
    expect(ticks("0 0 1 * mon", "2024-09-24T00:00:00Z", 3)).toEqual([
      "2024-09-30T00:00:00.000Z",
      "2024-10-01T00:00:00.000Z",
      "2024-10-07T00:00:00.000Z",
    ]);
  });

  it("ANDs them when either starts with * (Vixie reads the first character)", () => {
    expect(ticks("0 0 * * mon", "2024-09-01T00:00:00Z", 2)).toEqual(["2024-09-02T00:00:00.000Z", "2024-09-09T00:00:00.000Z"]);
    expect(ticks("0 0 13 * *", "2024-09-01T00:00:00Z", 2)).toEqual(["2024-09-13T00:00:00.000Z", "2024-10-13T00:00:00.000Z"]);
    // "*/2" counts as unrestricted for this rule, as in Vixie: odd days that are Mondays.
    expect(ticks("0 0 */2 * mon", "2024-09-01T00:00:00Z", 3)).toEqual([
      "2024-09-09T00:00:00.000Z",
      "2024-09-23T00:00:00.000Z",
      "2024-10-07T00:00:00.000Z",
    ]);
  });

  it("rejects a seconds field and says what is accepted", () => {
    const error = rejection("0 */5 * * * *");
    expect(error.code).toBe("CRON_INVALID");
    expect(error.message).toContain("a seconds (or year) field is not accepted");
    expect(error.message).toContain('five fields "minute hour day-of-month month day-of-week"');
    expect(error.message).toContain("@hourly @daily @weekly @monthly @yearly");
    expect(rejection("0 0 12 * * ? 2025").message).toContain("not accepted");
  });

  it("rejects the Quartz ? L W # and names each", () => {
    expect(rejection("0 12 ? * mon").message).toContain('Quartz "?"');
    expect(rejection("0 12 L * *").message).toContain('Quartz "L"');
    expect(rejection("0 12 LW * *").message).toContain('Quartz "W"');
    expect(rejection("0 12 15W * *").message).toContain('Quartz "W"');
    expect(rejection("0 12 * * 5L").message).toContain('Quartz "L"');
    expect(rejection("0 12 * * friL").message).toContain('Quartz "L"');
    expect(rejection("0 12 * * 1#2").message).toContain('Quartz "#"');
    for (const expression of ["0 12 ? * mon", "0 12 L * *", "0 12 * * 1#2"]) {
      expect(rejection(expression).message).toContain("five fields");
    }
  });

  it("rejects malformed fields with the field named", () => {
    expect(rejection("60 * * * *").message).toContain("minute field has 60, outside 0-59");
    expect(rejection("* 24 * * *").message).toContain("hour field has 24");
    expect(rejection("* * 0 * *").message).toContain("day-of-month field has 0");
    expect(rejection("* * * 13 *").message).toContain("month field has 13");
    expect(rejection("* * * * 8").message).toContain("day-of-week field has 8");
    expect(rejection("* * * foo *").message).toContain("names: jan");
    expect(rejection("*/0 * * * *").message).toContain("step");
    expect(rejection("30-10 * * * *").message).toContain("runs backwards");
    expect(rejection("1,,2 * * * *").message).toContain("empty list item");
    expect(rejection("* * * *").message).toContain("has 4 fields; five are needed");
    expect(rejection("").message).toContain("is empty");
    expect(rejection("@reboot").message).toContain("@reboot");
    expect(rejection("@fortnightly").message).toContain("not a known macro");
    expect(rejection("1.5 * * * *").code).toBe("CRON_INVALID");
  });

  it("rejects an expression that can never fire", () => {
    expect(rejection("0 0 30 2 *").message).toContain("never fires");
    expect(rejection("0 0 31 apr,jun,sep,nov *").message).toContain("never fires");
    // Feb 29 does exist, every four years.
    expect(ticks("0 0 29 2 *", "2025-01-01T00:00:00Z", 2)).toEqual(["2028-02-29T00:00:00.000Z", "2032-02-29T00:00:00.000Z"]);
  });

  it("finds the next ticks in UTC across month and year ends", () => {
    expect(ticks("59 23 31 12 *", "2024-12-31T23:59:00Z", 1)).toEqual(["2025-12-31T23:59:00.000Z"]);
    expect(ticks("0 0 31 * *", "2024-01-31T00:00:00Z", 3)).toEqual([
      "2024-03-31T00:00:00.000Z",
      "2024-05-31T00:00:00.000Z",
      "2024-07-31T00:00:00.000Z",
    ]);
    expect(ticks("*/20 * * * *", "2024-03-01T10:05:30Z", 3)).toEqual([
      "2024-03-01T10:20:00.000Z",
      "2024-03-01T10:40:00.000Z",
      "2024-03-01T11:00:00.000Z",
    ]);
  });

  it("nextCronTicks: what the CLI prints, from the same parser", () => {
    expect(nextCronTicks({ cron: "0 3 * * *", timezone: "America/Mexico_City", after: new Date("2021-10-30T12:00:00Z"), count: 2 }).map((d) => d.toISOString())).toEqual([
      "2021-10-31T09:00:00.000Z",
      "2021-11-01T09:00:00.000Z",
    ]);
    expect(nextCronTicks({ cron: "@hourly", after: 0 })).toHaveLength(5);
    expect(() => nextCronTicks({ cron: "0 0 ? * *" })).toThrow(/Quartz/);
    expect(() => nextCronTicks({ cron: "0 0 * * *", timezone: "Nowhere/City" })).toThrow(/unknown time zone/);
  });
});
