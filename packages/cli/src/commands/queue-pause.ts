import { AS_FLAG, defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { pausesFor, queueTasks } from "../queue-pauses.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "queue pause",
  summary: "stop every worker of the service from starting a task's jobs",
  description: `
Pauses a task for every process of the service: workers start none of its jobs (running ones finish) and its
jobs wait, attempts untouched, until \`jfast queue resume\`. Other tasks' jobs keep running. Kept where the
service keeps paused tasks: its database (jfast_paused_tasks) or, on Redis, the queue's own keys; a RabbitMQ
queue without the database plugin cannot pause. Pausing a paused task again changes nothing. Each pause is
written to the service's audit trail with the actor cli:<your user name> (or the name given with --as).
See jfast docs worker#pausing-a-task.`,
  flags: { queue: { ...QUEUE_FLAG, description: "pause every task of this named queue instead of one task" }, as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "task", description: "the task's name, e.g. invoice.send_email (or --queue NAME)" }],
  examples: ["jfast queue pause invoice.send_email", "jfast queue pause --queue media"],
  docs: "jfast docs worker#pausing-a-task",
  async run({ flags, positionals, io }) {
    const actor = repairActor(flags.as);
    if (flags.queue !== undefined) {
      if (positionals.length > 0) throw new UsageError("give a task or --queue, not both");
      const name = flags.queue;
      return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
        queueTasks(jfast, name);
        const paused = await (await cliRepairs(jfast, io, actor)).pauseQueue(name);
        io.out(`paused queue ${name}: ${paused.map((p) => p.task).join(", ")}\n`);
        return 0;
      });
    }
    if (positionals.length !== 1) throw new UsageError("give exactly one task name: jfast queue pause <task> (or --queue NAME)");
    const task = positionals[0]!;
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      pausesFor(jfast, task);
      // The admin API's own operation, so the pause is audited like one made there.
      const entry = await (await cliRepairs(jfast, io, actor)).pauseTask(task);
      io.out(`paused ${task} (since ${entry.pausedAt}${entry.pausedBy ? `, by ${entry.pausedBy}` : ""})\n`);
      return 0;
    });
  },
});
