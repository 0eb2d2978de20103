import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { oneName, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules delete",
  summary: "delete a schedule made at run time; every process stops firing it",
  description: `
A schedule declared in code cannot be deleted here (SCHEDULE_DECLARED): remove it from its tasks file, or pause
it. Jobs its ticks already enqueued stay. Audited, with what the schedule was.`,
  flags: { as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "name", description: "the schedule's name, as jfast schedules list prints it" }],
  examples: ["jfast schedules delete nightly-report"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "delete");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      await schedules.delete(name);
      io.out(`deleted schedule ${name}\n`);
      return 0;
    });
  },
});
