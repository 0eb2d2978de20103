import { describe, expect, it } from "vitest";
import { Job } from "./job.js";
import { jobIdTime, newJobId } from "./job-id.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("job ids", () => {
  it("are version-7 UUIDs carrying the time in their first 48 bits", () => {
    const at = Date.parse("2026-11-30T01:30:00.123Z");
    const id = newJobId(at);
    expect(id).toMatch(V7);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it("sort by creation time across milliseconds, and differ within one", () => {
    const ids = [newJobId(1_000), newJobId(1_001), newJobId(2_000_000_000_000)];
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => newJobId(5)));
    expect(same.size).toBe(1000);
  });

  it("draw every random digit afresh, across refills of the random pool", () => {
    // 5 000 ids in one millisecond: the pool of random bytes is refilled several times meanwhile.
    const ids = Array.from({ length: 5000 }, () => newJobId(7));
    expect(new Set(ids).size).toBe(5000);
    expect(ids.every((id) => V7.test(id) && id.startsWith("00000000-0007-7"))).toBe(true);
    // Each random position takes every value its bits allow: no digit is stuck or left out.
    const randomPositions = [15, 16, 17, 20, 21, 22, ...Array.from({ length: 12 }, (_, i) => 24 + i)];
    for (const at of randomPositions) expect(new Set(ids.map((id) => id[at])).size).toBe(16);
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(["8", "9", "a", "b"]));
  });

  it("are what a new Job gets unless it is given one", () => {
    expect(new Job({ task: "x.y" }).id).toMatch(V7);
    expect(new Job({ task: "x.y", id: "mine" }).id).toBe("mine");
  });

  it("give back the time they carry; other ids carry none", () => {
    const at = Date.parse("2026-11-30T01:30:00.123Z");
    expect(jobIdTime(newJobId(at))).toBe(at);
    const job = new Job({ task: "x.y" });
    expect(jobIdTime(job.id)).toBe(job.createdAt.getTime());
    expect(jobIdTime("mine")).toBeNull();
    // A version-4 UUID has no time in it.
    expect(jobIdTime("0af76519-16cd-43dd-8448-eb211c80319c")).toBeNull();
  });
});
