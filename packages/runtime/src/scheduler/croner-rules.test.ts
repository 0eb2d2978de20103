import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { parseCron } from "./cron-parse.js";
import { ScheduleError } from "./schedule-error.js";
import { nextCronTicks } from "./trigger.js";

/**
 * The rules we keep on top of croner, each against what croner does alone with the same text. When a
 * "croner alone" line starts agreeing with ours, docs/scheduler.md's reason for that rule is out of date.
 */
const ours = (cron: string, timezone: string, after: string, count: number) =>
  nextCronTicks({ cron, timezone, after: new Date(after), count }).map((d) => d.toISOString());
const cronerAlone = (cron: string, timezone: string, after: string, count: number) =>
  new Cron(cron, { mode: "5-part", timezone }).nextRuns(count, new Date(after)).map((d) => d.toISOString());

function refusal(expression: string): string {
  try {
    parseCron(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(ScheduleError);
    expect((error as ScheduleError).code).toBe("CRON_INVALID");
    return (error as ScheduleError).message;
  }
  throw new Error(`"${expression}" was accepted`);
}

describe("our rules on top of croner", () => {
  it("Vixie's first-character rule: */2 in day-of-month counts as unrestricted, so the day fields AND", () => {
    const vixie = ["2024-09-09T00:00:00.000Z", "2024-09-23T00:00:00.000Z", "2024-10-07T00:00:00.000Z"];
    expect(ours("0 0 */2 * mon", "UTC", "2024-09-01T00:00:00Z", 3)).toEqual(vixie);
    // croner ORs any day field that is not exactly "*": every odd day and every Monday.
    expect(cronerAlone("0 0 */2 * mon", "UTC", "2024-09-01T00:00:00Z", 3)).not.toEqual(vixie);
  });

  it("refuses the Quartz and croner extensions croner accepts", () => {
    for (const expression of ["0 12 ? * mon", "0 12 L * *", "0 12 15W * *", "0 12 * * 1-5L", "0 12 * * 1,5#2", "0 12 * * +mon"]) {
      expect(() => new Cron(expression, { mode: "5-part" })).not.toThrow();
      expect(refusal(expression)).toContain("is not accepted");
    }
    expect(refusal("0 12 * * 1-5L")).toContain('Quartz "L"');
    expect(refusal("0 12 * * 1,5#2")).toContain('Quartz "#" (nth weekday of the month) in "5#2"');
    expect(refusal("0 12 * * +mon")).toContain('"+" in the day-of-week field');
  });

  it("a wall time skipped by the clock fires moved forward by the jump, not at the gap's end", () => {
    // New York, 2024-03-10: 02:00 EST jumps to 03:00 EDT. 02:30 fires at 03:30 EDT (07:30 UTC).
    expect(ours("30 2 * * *", "America/New_York", "2024-03-09T12:00:00Z", 1)).toEqual(["2024-03-10T07:30:00.000Z"]);
    expect(cronerAlone("30 2 * * *", "America/New_York", "2024-03-09T12:00:00Z", 1)).not.toEqual(["2024-03-10T07:30:00.000Z"]);
    // Lord Howe, 2024-10-06: 02:00 jumps to 02:30. 02:15 fires at 02:45 (15:45 UTC).
    expect(ours("15 2 * * *", "Australia/Lord_Howe", "2024-10-05T00:00:00Z", 1)).toEqual(["2024-10-05T15:45:00.000Z"]);
  });

  it("names the field and item croner refuses, in the words of the accepted syntax", () => {
    expect(refusal("0 0 * * 1,mon-9")).toContain("day-of-week field has 9, outside 0-7");
    expect(refusal("0 0 1-5,20-10 * *")).toContain("day-of-month range 20-10 runs backwards");
    expect(refusal("/10 * * * *")).toContain("a step goes after * or a range, e.g. */10");
    expect(refusal("*/61 * * * *")).toContain("a step is a whole number from 1 to 60");
    expect(refusal("0 0 * * sunday")).toContain('day-of-week field has "sunday", which is not a number 0-7 (names: sun');
  });
});
