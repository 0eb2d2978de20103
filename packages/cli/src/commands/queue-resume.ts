import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { pausesFor } from "../queue-pauses.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "queue resume",
  summary: "let workers start a paused task's jobs again",
  description: `
Resumes a paused task: every worker of the service starts its jobs again, the ones that waited first, in their
usual order, attempts as they were. Resuming a task that is not paused changes nothing and says so.
See jfast docs worker#pausing-a-task.`,
  flags: { root: ROOT_FLAG },
  positionals: [{ name: "task", description: "the task's name, e.g. invoice.send_email" }],
  examples: ["jfast queue resume invoice.send_email"],
  docs: "jfast docs worker#pausing-a-task",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one task name: jfast queue resume <task>");
    const task = positionals[0]!;
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      const was = await pausesFor(jfast, task).resume({ task });
      io.out(was ? `resumed ${task}\n` : `${task} was not paused; nothing changed\n`);
      return 0;
    });
  },
});
