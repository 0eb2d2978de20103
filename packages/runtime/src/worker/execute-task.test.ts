import { describe, expect, it } from "vitest";
import { defineTask } from "../core/define-task.js";
import { Job } from "../core/job.js";
import { createLogger } from "../observability/logger.js";
import { AttemptCancellation } from "./cancellation.js";
import { createTaskExecutor } from "./execute-task.js";

describe("task executor", () => {
  const execute = createTaskExecutor({
    context: { serviceName: "t", require: <T,>() => undefined as T },
    database: () => null,
    logger: createLogger({ service: "t", level: "silent" }),
  });

  it("gives the handler the attempt's signal, which fires when the attempt is cancelled", async () => {
    const cancellation = new AttemptCancellation();
    const task = defineTask("exec.wait", async (_payload, { signal }) => {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return signal.reason;
    });
    const running = execute(task, new Job({ task: "exec.wait" }), cancellation);
    const reason = new Error("timed out");
    setTimeout(() => cancellation.abort(reason), 5);
    expect(await running).toBe(reason);
  });

  it("turns a handler that throws at once into a rejected attempt, not a throw", async () => {
    const task = defineTask("exec.sync", () => {
      throw new Error("bad input");
    });
    const attempt = execute(task, new Job({ task: "exec.sync" }), new AttemptCancellation());
    await expect(attempt).rejects.toThrow("bad input");
  });

  it("gives a handler that looks only after the cancellation an aborted signal", async () => {
    const cancellation = new AttemptCancellation();
    cancellation.abort(new Error("shutting down"));
    const task = defineTask("exec.late", async (_payload, tools) => tools.signal.aborted);
    expect(await execute(task, new Job({ task: "exec.late" }), cancellation)).toBe(true);
  });

  it("hands the handler the context, the job and the session, and nothing of the worker's own", async () => {
    const job = new Job({ task: "exec.tools" });
    const task = defineTask("exec.tools", async (_payload, tools) => ({ keys: Object.keys(tools).sort(), job: tools.job, ctx: tools.ctx }));
    const seen = (await execute(task, job, new AttemptCancellation())) as { keys: string[]; job: Job; ctx: { serviceName: string } };
    expect(seen.keys).toEqual(["ctx", "job", "session"]);
    expect(seen.job).toBe(job);
    expect(seen.ctx.serviceName).toBe("t");
  });
});
