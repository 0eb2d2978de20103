import { describe, expect, it } from "vitest";
import { firstHandOff, Job } from "./job.js";

describe("firstHandOff", () => {
  it("is true once for jobs whose ids were generated here, then false for the same objects", () => {
    const jobs = [new Job({ task: "a.one" }), new Job({ task: "a.two" })];
    expect(firstHandOff(jobs)).toBe(true);
    expect(firstHandOff(jobs)).toBe(false);
    expect(firstHandOff([jobs[0]!])).toBe(false);
  });

  it("is false for a batch with a job whose id was passed in, or rebuilt from JSON, or restored", () => {
    const generated = new Job({ task: "a.one" });
    expect(firstHandOff([generated, new Job({ id: "fixed-1", task: "a.two" })])).toBe(false);
    expect(firstHandOff([Job.fromJSON(new Job({ task: "a.three" }).toJSON())])).toBe(false);
    const json = new Job({ task: "a.four" }).toJSON();
    const restored = Job.restore({ ...json, availableAt: new Date(json.availableAt), createdAt: new Date(json.createdAt) });
    expect(firstHandOff([restored])).toBe(false);
  });

  it("is false for a batch that holds the same job twice (its second row would collide with its first)", () => {
    const job = new Job({ task: "a.one" });
    expect(firstHandOff([job, job])).toBe(false);
  });
});

describe("new Job", () => {
  it("refuses an availableAt that is not a date, naming what to pass", () => {
    expect(() => new Job({ task: "a.one", availableAt: "next tuesday" })).toThrow(/availableAt that is not a date \(next tuesday\); pass a Date or an ISO 8601 string/);
    expect(() => new Job({ task: "a.one", delayMs: Number.NaN })).toThrow(/delayMs as a number/);
  });
});
