import { describe, expect, it } from "vitest";
import { Job } from "../../core/job.js";
import { encodeJob } from "./message.js";
import { Header } from "./names.js";

describe("encodeJob", () => {
  it("publishes a job's first attempt without headers: the task is in `type`, the id in `message-id`", () => {
    const json = new Job({ task: "billing.charge", payload: { amount: 3 } }).toJSON();
    const { content, options } = encodeJob(json);
    expect(options).toMatchObject({ persistent: true, mandatory: true, contentType: "application/json", messageId: json.id, type: "billing.charge" });
    expect(options.headers).toBeUndefined();
    expect(JSON.parse(content.toString("utf8"))).toEqual(json);
  });

  it("adds the headers once an attempt was spent, for a long delay, and on dead letters", () => {
    const json = { ...new Job({ task: "billing.charge" }).toJSON(), attempts: 2 };
    expect(encodeJob(json).options.headers).toEqual({ [Header.attempts]: 2, [Header.task]: "billing.charge" });
    const first = new Job({ task: "billing.charge" }).toJSON();
    expect(encodeJob(first, { dueAt: 123 }).options.headers).toMatchObject({ [Header.attempts]: 0, [Header.dueAt]: 123 });
    expect(encodeJob(first, { diedAt: 456 }).options.headers).toMatchObject({ [Header.diedAt]: 456, [Header.errors]: [] });
  });
});
