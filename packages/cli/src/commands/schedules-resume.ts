import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { oneName, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules resume",
  summary: "let a paused schedule tick again, from its next tick",
  description: `
The ticks that passed while it was paused stay skipped: the first to fire is the next one after the resume.
Resuming a schedule that is not paused changes nothing. Audited.`,
  flags: { as: AS_FLAG, root: ROOT_FLAG },
  positionals: [{ name: "name", description: "the schedule's name, as jfast schedules list prints it" }],
  examples: ["jfast schedules resume nightly-report"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "resume");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      const { changed } = await schedules.resume(name);
      io.out(changed ? `resumed schedule ${name}\n` : `schedule ${name} was not paused\n`);
      return 0;
    });
  },
});
