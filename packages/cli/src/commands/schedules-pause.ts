import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { oneName, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules pause",
  summary: "stop a schedule's ticks in every process until it is resumed",
  description: `
Works on schedules declared in code and made at run time alike. No tick fires while paused, and resuming does not
fire the ones that passed meanwhile. Pausing a paused schedule changes nothing. Audited.`,
  flags: { as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "name", description: "the schedule's name, as jfast schedules list prints it" }],
  examples: ["jfast schedules pause nightly-report"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "pause");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      const { changed } = await schedules.pause(name);
      io.out(changed ? `paused schedule ${name}\n` : `schedule ${name} was already paused\n`);
      return 0;
    });
  },
});
