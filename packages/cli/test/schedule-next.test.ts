import { describe, expect, it } from "vitest";
import { runJfast } from "./jfast-process.js";

describe("jfast schedule next", () => {
  it("prints the next ticks in UTC, read in the zone across a DST change", async () => {
    const result = await runJfast(["schedule", "next", "30 2 * * *", "--tz", "Europe/Berlin", "--after", "2025-03-29T00:00:00Z", "--count", "3"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    // 02:30 does not exist on 2025-03-30 in Berlin: it fires at 03:30 CEST, i.e. 01:30 UTC.
    expect(result.stdout).toBe("2025-03-29T01:30:00.000Z\n2025-03-30T01:30:00.000Z\n2025-03-31T00:30:00.000Z\n");
  });

  it("prints a JSON array of strings with --json", async () => {
    const result = await runJfast(["schedule", "next", "@hourly", "--after", "2025-01-01T10:15:00Z", "--count", "2", "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(["2025-01-01T11:00:00.000Z", "2025-01-01T12:00:00.000Z"]);
  });

  it("exits 2 with the parser's message for an invalid expression or zone", async () => {
    const quartz = await runJfast(["schedule", "next", "0 12 ? * mon"]);
    expect(quartz.code).toBe(2);
    expect(quartz.stdout).toBe("");
    expect(quartz.stderr).toContain('cron "0 12 ? * mon": the Quartz "?" is not accepted');
    expect(quartz.stderr).toContain('five fields "minute hour day-of-month month day-of-week"');

    const seconds = await runJfast(["schedule", "next", "*/5 * * * * *"]);
    expect(seconds.code).toBe(2);
    expect(seconds.stderr).toContain("a seconds (or year) field is not accepted");

    const zone = await runJfast(["schedule", "next", "0 3 * * *", "--tz", "Mars/Olympus"]);
    expect(zone.code).toBe(2);
    expect(zone.stderr).toContain('unknown time zone "Mars/Olympus"');

    const after = await runJfast(["schedule", "next", "0 3 * * *", "--after", "yesterday"]);
    expect(after.code).toBe(2);
    expect(after.stderr).toContain("--after expects an ISO-8601 time");

    const unquoted = await runJfast(["schedule", "next", "0", "3", "*", "*", "*"]);
    expect(unquoted.code).toBe(2);
    expect(unquoted.stderr).toContain('quote it: jfast schedule next "0 3 * * *"');
  });
});
