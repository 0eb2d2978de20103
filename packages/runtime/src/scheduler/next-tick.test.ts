import { describe, expect, it } from "vitest";
import { parseCron } from "./cron-parse.js";
import { nextCronTick, nextIntervalTick } from "./next-tick.js";
import { createTrigger, previousTick, upcomingTicks } from "./trigger.js";
import { offsetAt, resolveTimeZone } from "./zone.js";

/** The next `count` ticks after `afterIso` for `expression` read in `zone`, in UTC ISO. */
function ticks(expression: string, zone: string, afterIso: string, count: number): string[] {
  const trigger = createTrigger({ cron: expression, timezone: zone, label: "test" });
  return upcomingTicks(trigger, Date.parse(afterIso), count).map((t) => new Date(t).toISOString());
}

/** The local wall time of an instant, "YYYY-MM-DD HH:MM +HH:MM", to state expectations the way a reader checks them. */
function local(iso: string, zone: string): string {
  const instant = Date.parse(iso);
  const offset = offsetAt(zone, instant);
  const wall = new Date(instant + offset).toISOString();
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset) / 60_000;
  return `${wall.slice(0, 10)} ${wall.slice(11, 16)} ${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

describe("next tick in a time zone", () => {
  it("reads cron in UTC unless a zone is named", () => {
    expect(ticks("0 3 * * *", "UTC", "2024-06-01T00:00:00Z", 1)).toEqual(["2024-06-01T03:00:00.000Z"]);
    expect(ticks("0 3 * * *", "Asia/Kolkata", "2024-06-01T00:00:00Z", 1)).toEqual(["2024-06-01T21:30:00.000Z"]);
  });

  describe("America/New_York", () => {
    const zone = "America/New_York";
    it("spring forward: 02:30 does not exist and fires once at 03:30", () => {
      const result = ticks("30 2 * * *", zone, "2024-03-09T12:00:00Z", 2);
      expect(result).toEqual(["2024-03-10T07:30:00.000Z", "2024-03-11T06:30:00.000Z"]);
      expect(result.map((t) => local(t, zone))).toEqual(["2024-03-10 03:30 -04:00", "2024-03-11 02:30 -04:00"]);
      expect(ticks("0 2 * * *", zone, "2024-03-09T12:00:00Z", 1).map((t) => local(t, zone))).toEqual(["2024-03-10 03:00 -04:00"]);
    });
    it("spring forward with every hour: one tick per real hour, none doubled", () => {
      expect(ticks("30 * * * *", zone, "2024-03-10T05:00:00Z", 4).map((t) => local(t, zone))).toEqual([
        "2024-03-10 00:30 -05:00",
        "2024-03-10 01:30 -05:00",
        "2024-03-10 03:30 -04:00",
        "2024-03-10 04:30 -04:00",
      ]);
    });
    it("fall back: 01:30 happens twice and fires at the first only", () => {
      const result = ticks("30 1 * * *", zone, "2024-11-02T12:00:00Z", 2);
      expect(result).toEqual(["2024-11-03T05:30:00.000Z", "2024-11-04T06:30:00.000Z"]);
      expect(result.map((t) => local(t, zone))).toEqual(["2024-11-03 01:30 -04:00", "2024-11-04 01:30 -05:00"]);
      // Asked from inside the repeated hour, the first occurrence is past and the second is not fired.
      expect(ticks("30 1 * * *", zone, "2024-11-03T06:10:00Z", 1)).toEqual(["2024-11-04T06:30:00.000Z"]);
      expect(ticks("*/20 1 * * *", zone, "2024-11-03T04:59:00Z", 4).map((t) => local(t, zone))).toEqual([
        "2024-11-03 01:00 -04:00",
        "2024-11-03 01:20 -04:00",
        "2024-11-03 01:40 -04:00",
        "2024-11-04 01:00 -05:00",
      ]);
    });
    it("fall back with the hour field *: keeps firing every real hour", () => {
      expect(ticks("30 * * * *", zone, "2024-11-03T04:00:00Z", 4).map((t) => local(t, zone))).toEqual([
        "2024-11-03 00:30 -04:00",
        "2024-11-03 01:30 -04:00",
        "2024-11-03 01:30 -05:00",
        "2024-11-03 02:30 -05:00",
      ]);
      // From between the two occurrences, the second still comes before later wall times.
      expect(ticks("10 * * * *", zone, "2024-11-03T05:50:00Z", 2)).toEqual(["2024-11-03T06:10:00.000Z", "2024-11-03T07:10:00.000Z"]);
      expect(ticks("10,55 * * * *", zone, "2024-11-03T05:40:00Z", 3)).toEqual([
        "2024-11-03T05:55:00.000Z",
        "2024-11-03T06:10:00.000Z",
        "2024-11-03T06:55:00.000Z",
      ]);
    });
  });

  describe("Europe/Berlin", () => {
    const zone = "Europe/Berlin";
    it("spring forward: 02:30 fires at 03:30 CEST", () => {
      expect(ticks("30 2 * * *", zone, "2024-03-30T12:00:00Z", 2).map((t) => local(t, zone))).toEqual([
        "2024-03-31 03:30 +02:00",
        "2024-04-01 02:30 +02:00",
      ]);
    });
    it("fall back: 02:30 fires once, in summer time", () => {
      expect(ticks("30 2 * * *", zone, "2024-10-26T12:00:00Z", 2)).toEqual(["2024-10-27T00:30:00.000Z", "2024-10-28T01:30:00.000Z"]);
    });
    it("fall back with */30 in the minutes and * in the hours: every real half hour", () => {
      expect(ticks("*/30 * * * *", zone, "2024-10-26T23:45:00Z", 5).map((t) => local(t, zone))).toEqual([
        "2024-10-27 02:00 +02:00",
        "2024-10-27 02:30 +02:00",
        "2024-10-27 02:00 +01:00",
        "2024-10-27 02:30 +01:00",
        "2024-10-27 03:00 +01:00",
      ]);
    });
  });

  describe("America/Mexico_City (DST until its abolition in 2022)", () => {
    const zone = "America/Mexico_City";
    it("spring forward 2021: 02:30 fires at 03:30 CDT", () => {
      expect(ticks("30 2 * * *", zone, "2021-04-03T12:00:00Z", 1)).toEqual(["2021-04-04T08:30:00.000Z"]);
      expect(local("2021-04-04T08:30:00.000Z", zone)).toBe("2021-04-04 03:30 -05:00");
    });
    it("fall back 2021: 01:00 fires at the first occurrence", () => {
      expect(ticks("0 1 * * *", zone, "2021-10-30T12:00:00Z", 2)).toEqual(["2021-10-31T06:00:00.000Z", "2021-11-01T07:00:00.000Z"]);
    });
    it("since 2023, 03:00 is 09:00 UTC all year", () => {
      expect(ticks("0 3 * * *", zone, "2023-01-10T00:00:00Z", 1)).toEqual(["2023-01-10T09:00:00.000Z"]);
      expect(ticks("0 3 * * *", zone, "2023-07-10T00:00:00Z", 1)).toEqual(["2023-07-10T09:00:00.000Z"]);
      expect(ticks("0 3 * * *", zone, "2023-04-01T12:00:00Z", 3)).toEqual([
        "2023-04-02T09:00:00.000Z",
        "2023-04-03T09:00:00.000Z",
        "2023-04-04T09:00:00.000Z",
      ]);
    });
  });

  describe("Australia/Lord_Howe (30-minute shift)", () => {
    const zone = "Australia/Lord_Howe";
    it("spring forward (02:00 → 02:30): 02:15 fires once at 02:45", () => {
      const result = ticks("15 2 * * *", zone, "2024-10-05T00:00:00Z", 2);
      expect(result.map((t) => local(t, zone))).toEqual(["2024-10-06 02:45 +11:00", "2024-10-07 02:15 +11:00"]);
      expect(result[0]).toBe("2024-10-05T15:45:00.000Z");
    });
    it("spring forward with every quarter hour: continuous in real time", () => {
      expect(ticks("*/15 * * * *", zone, "2024-10-05T14:50:00Z", 5)).toEqual([
        "2024-10-05T15:00:00.000Z",
        "2024-10-05T15:15:00.000Z",
        "2024-10-05T15:30:00.000Z",
        "2024-10-05T15:45:00.000Z",
        "2024-10-05T16:00:00.000Z",
      ]);
    });
    it("fall back (02:00 → 01:30): 01:45 fires at the first occurrence", () => {
      expect(ticks("45 1 * * *", zone, "2024-04-06T00:00:00Z", 2).map((t) => local(t, zone))).toEqual([
        "2024-04-07 01:45 +11:00",
        "2024-04-08 01:45 +10:30",
      ]);
    });
    it("fall back with the hour field *: both occurrences of 01:45", () => {
      expect(ticks("45 * * * *", zone, "2024-04-06T13:30:00Z", 4).map((t) => local(t, zone))).toEqual([
        "2024-04-07 00:45 +11:00",
        "2024-04-07 01:45 +11:00",
        "2024-04-07 01:45 +10:30",
        "2024-04-07 02:45 +10:30",
      ]);
    });
  });

  it("validates zone names and canonicalises them", () => {
    expect(resolveTimeZone("europe/berlin")).toBe("Europe/Berlin");
    expect(() => resolveTimeZone("Mars/Olympus_Mons")).toThrow(/unknown time zone "Mars\/Olympus_Mons"/);
  });
});

describe("intervals", () => {
  it("count from the Unix epoch in UTC", () => {
    const every5 = createTrigger({ every: { minutes: 5 }, label: "test" });
    expect(upcomingTicks(every5, Date.parse("2024-06-01T10:02:13Z"), 2).map((t) => new Date(t).toISOString())).toEqual([
      "2024-06-01T10:05:00.000Z",
      "2024-06-01T10:10:00.000Z",
    ]);
    // On the hour, on every replica, whenever each started.
    expect(new Date(nextIntervalTick(3_600_000, Date.parse("2024-06-01T10:00:00Z"))).toISOString()).toBe("2024-06-01T11:00:00.000Z");
    expect(new Date(nextIntervalTick(3_600_000, Date.parse("2024-06-01T10:59:59.999Z"))).toISOString()).toBe("2024-06-01T11:00:00.000Z");
    // 7 minutes does not divide an hour: the grid is the epoch's, not the hour's.
    const seven = 7 * 60_000;
    const tick = nextIntervalTick(seven, Date.parse("2024-06-01T10:00:00Z"));
    expect(tick % seven).toBe(0);
    expect(new Date(tick).toISOString()).toBe("2024-06-01T10:06:00.000Z");
  });

  it("add up their units and refuse what is not a positive duration or carries a zone", () => {
    expect(createTrigger({ every: { hours: 1, minutes: 30 }, label: "t" })).toEqual({ kind: "every", everyMs: 5_400_000 });
    expect(() => createTrigger({ every: { minutes: 0 }, label: "t" })).toThrow(/at least one second/);
    expect(() => createTrigger({ every: { weeks: 1 } as never, label: "t" })).toThrow(/unknown unit "weeks"/);
    expect(() => createTrigger({ every: { minutes: 5 }, timezone: "Europe/Berlin", label: "t" })).toThrow(/Unix epoch in UTC/);
    expect(() => createTrigger({ cron: "* * * * *", every: { minutes: 5 }, label: "t" })).toThrow(/not both/);
  });
});

describe("previousTick", () => {
  it("finds the latest tick at or before a time", () => {
    const daily = createTrigger({ cron: "0 3 * * *", timezone: "Europe/Berlin", label: "t" });
    expect(new Date(previousTick(daily, Date.parse("2024-06-10T12:00:00Z"))!).toISOString()).toBe("2024-06-10T01:00:00.000Z");
    expect(new Date(previousTick(daily, Date.parse("2024-06-10T01:00:00Z"))!).toISOString()).toBe("2024-06-10T01:00:00.000Z");
    const yearly = createTrigger({ cron: "@yearly", label: "t" });
    expect(new Date(previousTick(yearly, Date.parse("2024-06-10T12:00:00Z"))!).toISOString()).toBe("2024-01-01T00:00:00.000Z");
    const every = createTrigger({ every: { minutes: 5 }, label: "t" });
    expect(new Date(previousTick(every, Date.parse("2024-06-10T12:07:00Z"))!).toISOString()).toBe("2024-06-10T12:05:00.000Z");
  });

  it("agrees with nextCronTick on a DST day", () => {
    const cron = parseCron("30 * * * *");
    const zone = "America/New_York";
    let at = Date.parse("2024-11-03T03:00:00Z");
    const trigger = createTrigger({ cron: "30 * * * *", timezone: zone, label: "t" });
    for (let i = 0; i < 6; i++) {
      const next = nextCronTick(cron, zone, at)!;
      expect(previousTick(trigger, next + 59_000)).toBe(next);
      at = next;
    }
  });
});
