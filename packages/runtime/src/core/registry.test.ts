import { describe, expect, it } from "vitest";
import { defineTask } from "./define-task.js";
import { TaskRegistry } from "./registry.js";

describe("TaskRegistry: which tasks a named queue runs", () => {
  const registry = new TaskRegistry();
  registry.register(defineTask("mail.send", async () => undefined));
  registry.register(defineTask("media.resize", { queue: "media" }, async () => undefined));
  registry.register(defineTask("media.transcode", { queue: "media" }, async () => undefined));

  it("queueOf: a task's queue option, else default; default for a task declared elsewhere", () => {
    expect(registry.queueOf("mail.send")).toBe("default");
    expect(registry.queueOf("media.resize")).toBe("media");
    expect(registry.queueOf("billing.other_service_task")).toBe("default");
  });

  it("tasksIn: the tasks whose jobs go to a queue, none for a queue no task names", () => {
    expect(registry.tasksIn("media").map((t) => t.name)).toEqual(["media.resize", "media.transcode"]);
    expect(registry.tasksIn("default").map((t) => t.name)).toEqual(["mail.send"]);
    expect(registry.tasksIn("email")).toEqual([]);
  });
});
