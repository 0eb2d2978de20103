import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { oneName, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules trigger",
  summary: "enqueue one job of a schedule now, outside its ticks",
  description: `
The job is the schedule's task with its payload and scheduled_for set to now; paused or not, declared or made at
run time. It claims no tick: the schedule's own ticks go on as before. Prints the job's id. Audited.`,
  flags: { as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "name", description: "the schedule's name, as jfast schedules list prints it" }],
  examples: ["jfast schedules trigger nightly-report"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "trigger");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      const { jobId, task } = await schedules.trigger(name);
      io.out(`triggered schedule ${name}: job ${jobId} (${task})\n`);
      return 0;
    });
  },
});
