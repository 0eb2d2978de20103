import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "flows cancel",
  summary: "cancel every step of a flow that has not finished",
  description: `
Cancels a flow: each step not yet finished becomes cancelled. A waiting or ready step never runs; a running one
is cancelled at once and its handler sees its signal aborted at its worker's next heartbeat, as with
jfast jobs cancel. Finished steps keep their state and results. The cancellation is written to the service's
audit trail (flows.cancel) with the actor cli:<your user name> (or the name given with --as), as one from the
admin API or the dashboard is. A RabbitMQ queue without the database plugin keeps no flows:
NOT_SUPPORTED.

Exit codes: 0 the flow was cancelled; 1 no flow has that id; 2 usage error. See jfast docs flows and
jfast docs cli#jfast-flows.`,
  flags: {
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", description: "the flow's id" }],
  examples: ["jfast flows cancel 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e", "jfast flows cancel 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e --as ops-oncall"],
  docs: "jfast docs flows",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one flow id: jfast flows cancel <id>");
    const id = positionals[0]!;
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => {
      // The admin API's own operation, so the cancellation is audited like one made there.
      const result = await (await cliRepairs(jfast, io, actor)).cancelFlow(id);
      if (!result) {
        io.err(`jfast: no flow with id ${id}\n`);
        return 1;
      }
      io.out(`cancelled flow ${id}: ${result.cancelled.length} step${result.cancelled.length === 1 ? "" : "s"} not yet finished\n`);
      return 0;
    });
  },
});
