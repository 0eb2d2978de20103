import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "flows retry",
  summary: "retry a dead step of a flow, which resumes the flow where it stopped",
  description: `
Retries one dead step of a flow: its job goes back to the queue with its attempts reset (the dead-letter retry
of jfast jobs retry), and once it completes the steps after it run. A step that is not dead is refused and
nothing changes. The retry is written to the service's audit trail (flows.retryStep) with the actor
cli:<your user name> (or the name given with --as), as one from the admin API or the dashboard is.

Exit codes: 0 the step was retried; 1 no such flow or step, or the step is not dead; 2 usage error. See
jfast docs flows and jfast docs cli#jfast-flows.`,
  flags: {
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [
    { name: "id", description: "the flow's id" },
    { name: "step", description: "the dead step's name, as jfast flows show prints it" },
  ],
  examples: ["jfast flows retry 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e ship"],
  docs: "jfast docs flows",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 2) throw new UsageError("give the flow's id and the step's name: jfast flows retry <id> <step>");
    const [id, step] = positionals as [string, string];
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      // The admin API's own operation, so the retry is audited like one made there.
      const { jobId } = await (await cliRepairs(jfast, io, actor)).retryFlowStep({ id, step });
      io.out(`retried step ${step} of flow ${id} (job ${jobId})\n`);
      return 0;
    });
  },
});
