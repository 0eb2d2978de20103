import { AS_FLAG, defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { pausesFor, queueTasks } from "../queue-pauses.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "queue resume",
  summary: "let workers start a paused task's jobs again",
  description: `
Resumes a paused task: every worker of the service starts its jobs again, the ones that waited first, in their
usual order, attempts as they were. Resuming a task that is not paused changes nothing and says so. Each resume
is written to the service's audit trail with the actor cli:<your user name> (or the name given with --as).
See jfast docs worker#pausing-a-task.`,
  flags: { queue: { ...QUEUE_FLAG, description: "resume every task of this named queue instead of one task" }, as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "task", description: "the task's name, e.g. invoice.send_email" }],
  examples: ["jfast queue resume invoice.send_email", "jfast queue resume --queue media"],
  docs: "jfast docs worker#pausing-a-task",
  async run({ flags, positionals, io }) {
    const actor = repairActor(flags.as);
    if (flags.queue !== undefined) {
      if (positionals.length > 0) throw new UsageError("give a task or --queue, not both");
      const name = flags.queue;
      return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
        queueTasks(jfast, name);
        const { tasks, resumed } = await (await cliRepairs(jfast, io, actor)).resumeQueue(name);
        io.out(`resumed queue ${name}: ${resumed} of ${tasks.length} tasks were paused\n`);
        return 0;
      });
    }
    if (positionals.length !== 1) throw new UsageError("give exactly one task name: jfast queue resume <task> (or --queue NAME)");
    const task = positionals[0]!;
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      pausesFor(jfast, task);
      // The admin API's own operation, so the resume is audited like one made there.
      const was = await (await cliRepairs(jfast, io, actor)).resumeTask(task);
      io.out(was ? `resumed ${task}\n` : `${task} was not paused; nothing changed\n`);
      return 0;
    });
  },
});
