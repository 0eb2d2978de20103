import { describe, expect, it } from "vitest";
import { deadlineOf, expiredError, isExpired } from "./deadline.js";
import { Job } from "./job.js";

describe("deadlines", () => {
  it("take deadline or expiresInMs, not both, and refuse what is not a time", () => {
    expect(deadlineOf({}, 1000, "x")).toBeNull();
    expect(deadlineOf({ expiresInMs: 500 }, 1000, "x")).toEqual(new Date(1500));
    expect(deadlineOf({ deadline: "2030-01-01T00:00:00.000Z" }, 1000, "x")).toEqual(new Date("2030-01-01T00:00:00.000Z"));
    expect(() => deadlineOf({ deadline: new Date(), expiresInMs: 1 }, 1000, "new Job")).toThrow("not both");
    expect(() => deadlineOf({ deadline: "tomorrow" }, 1000, "new Job")).toThrow("a Date or an ISO 8601 string");
    expect(() => deadlineOf({ expiresInMs: -1 }, 1000, "new Job")).toThrow("0 or more");
  });

  it("travel with the job's JSON only when set, and say when they have passed", () => {
    const plain = new Job({ task: "mail.send", payload: {} });
    expect(plain.expiresAt).toBeNull();
    expect("expiresAt" in plain.toJSON()).toBe(false);
    const dated = new Job({ task: "mail.send", payload: {}, expiresInMs: 1000 });
    const back = Job.fromJSON(dated.toJSON());
    expect(back.expiresAt).toEqual(dated.expiresAt);
    expect(isExpired(back, dated.expiresAt!.getTime() - 1)).toBe(false);
    expect(isExpired(back, dated.expiresAt!.getTime())).toBe(true);
    expect(isExpired(plain)).toBe(false);
    expect(expiredError(dated.expiresAt!, 0, "claim")).toMatchObject({ attempt: 0, class: "JobExpired", reason: "expired" });
  });
});
