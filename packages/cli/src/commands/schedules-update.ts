import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { oneName, SPEC_FLAGS, specFromFlags, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules update",
  summary: "edit a schedule made at run time (cron or every, zone, payload, catch-up, task)",
  description: `
Changes the options given and keeps the others; --cron replaces an interval and --every an expression. Checked as
a declaration is (a bad value is a usage error, exit 2, and nothing changes). The next tick is the first of the new
definition after the edit. A schedule declared in code is refused (SCHEDULE_DECLARED): edit its tasks file, or
pause it. Audited with the before and after.`,
  flags: SPEC_FLAGS,
  positionals: [{ name: "name", description: "the schedule's name, as jfast schedules list prints it" }],
  examples: ['jfast schedules update nightly-report --cron "30 3 * * *"', "jfast schedules update refresh --every 10m --catch-up false"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "update");
    const patch = specFromFlags(flags);
    if (Object.keys(patch).length === 0) throw new UsageError("give at least one of --task, --cron, --every, --timezone, --payload, --catch-up");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      const { before, after } = await schedules.update({ name, patch });
      io.out(`updated schedule ${name}\n  before: ${JSON.stringify(before)}\n  after:  ${JSON.stringify(after)}\n`);
      return 0;
    });
  },
});
