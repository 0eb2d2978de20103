import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { noSchedules, oneName, SPEC_FLAGS, specFromFlags, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules create",
  summary: "make a schedule at run time: every process of the service fires it, without a restart",
  description: `
Stores a schedule in the scheduler's store (PostgreSQL or Redis): every process with the scheduler on picks it up
within a second and its ticks are claimed once across them, as a declared schedule's are. It takes the options
of tasks.schedule(...) and is checked the same way: an invalid expression, an unknown zone, a Quartz field or an
unknown task is a usage error (exit 2) with the scheduler's message, and nothing is stored. The change is written
to the service's audit trail with the actor cli:<your user name> (or the name given with --as).`,
  flags: SPEC_FLAGS,
  positionals: [{ name: "name", description: "the schedule's name: letters, digits and . _ - :" }],
  examples: [
    'jfast schedules create nightly-report --task report.send --cron "0 3 * * *" --timezone Europe/Paris',
    "jfast schedules create refresh --task rates.refresh --every 5m --payload '{\"source\":\"ecb\"}'",
  ],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, positionals, io }) {
    const name = oneName(positionals, "create");
    const spec = specFromFlags(flags);
    if (spec.task === undefined) throw new UsageError("give the task each tick enqueues: --task <task>");
    if (spec.cron === undefined && spec.every === undefined) throw new UsageError("give --cron EXPR or --every DURATION");
    return withSchedules({ root: flags.root, as: flags.as, cwd: io.cwd, io }, async (schedules) => {
      const listed = await schedules.list({ count: 1 });
      if (listed === null) throw noSchedules();
      await schedules.create({ name, spec: { ...spec, task: spec.task! } });
      io.out(`created schedule ${name}\n`);
      return 0;
    });
  },
});
