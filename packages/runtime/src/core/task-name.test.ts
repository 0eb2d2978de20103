import { describe, expect, it } from "vitest";
import { TaskRegistry } from "./registry.js";
import { defineTask } from "./define-task.js";
import { validateTaskName } from "./task.js";

describe("task names", () => {
  it("keeps jfast.corrupt_job for unreadable jobs: no handler can take their dead letters", () => {
    expect(validateTaskName("jfast.corrupt_job")).toMatch(/reserved/);
    expect(validateTaskName("jfast.corrupt_jobs")).toBeNull();
    const registry = new TaskRegistry();
    expect(() => registry.register(defineTask("jfast.corrupt_job", async () => undefined))).toThrow(/reserved/);
  });
});
