import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { createQueueProvider } from "../queue/queue-provider.js";
import { JfastError } from "../errors/jfast-error.js";
import { defineTask } from "./define-task.js";
import { Job, type JobJSON, type JobPriority } from "./job.js";
import { TaskRegistry } from "./registry.js";

describe("job priority", () => {
  it("is 5 unless chosen, and travels in the job's JSON (the outbox relay rebuilds jobs from it)", () => {
    expect(new Job({ task: "a.b" }).priority).toBe(5);
    const urgent = new Job({ task: "a.b", priority: 0 });
    expect(urgent.toJSON().priority).toBe(0);
    expect(Job.fromJSON(urgent.toJSON()).priority).toBe(0);
    // A job stored before priorities existed.
    const { priority: _left, ...old } = urgent.toJSON();
    expect(Job.fromJSON(old as JobJSON).priority).toBe(5);
  });

  it("refuses anything but a whole number from 0 to 9 at new Job, naming the fix", () => {
    for (const bad of [-1, 10, 2.5, Number.NaN, "1", null]) {
      const error = (() => {
        try {
          new Job({ task: "a.b", priority: bad as unknown as JobPriority });
        } catch (e) {
          return e;
        }
        return null;
      })() as JfastError;
      expect(error, String(bad)).toBeInstanceOf(JfastError);
      expect(error.code).toBe("PRIORITY_INVALID");
      expect(error.hint).toMatch(/integer from 0 to 9, lower runs first/);
      expect(error.docs).toBe("jfast docs tasks#priority");
    }
  });

  it("takes the task's priority unless the job chose one; task(name, { priority }) is checked too", async () => {
    const report = defineTask<{ n: number }>("report.rebuild", { priority: 2 }, async () => undefined);
    expect(report.job({ n: 1 }).priority).toBe(2);
    expect(report.job({ n: 1 }, { priority: 7 }).priority).toBe(7);
    expect(() => defineTask("report.bad", { priority: 12 as JobPriority }, async () => undefined)).toThrow(/priority must be a whole number from 0/);

    const registry = new TaskRegistry();
    registry.register(report);
    registry.register(defineTask("report.plain", async () => undefined));
    const queue = createQueueProvider({ backend: createMemoryBackend(), name: "q", registry, defaultMaxAttempts: 3 });
    expect(queue.prepare(new Job({ task: "report.rebuild" })).priority).toBe(2);
    expect(queue.prepare(new Job({ task: "report.rebuild", priority: 5 })).priority).toBe(5);
    expect(queue.prepare(new Job({ task: "report.plain" })).priority).toBe(5);
    // A job read back from a backend keeps its own.
    const stored = Job.fromJSON({ ...new Job({ task: "report.rebuild", priority: 9 }).toJSON() });
    expect(queue.prepare(stored).priority).toBe(9);
  });
});
