import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { outboxSelection, withOutbox } from "../outbox-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "outbox retry",
  summary: "give dead outbox rows back to the relay with their attempts reset",
  description: `
Puts dead outbox rows back to pending, due at once, with attempts reset to 0; the relays of the running
processes (and of this command, while it runs) send them again. Their error history is kept, so they count
as failing in /ready until delivered. Fix the cause first (the queue or broker reachable, the kafka plugin
on): a row that is still undeliverable dies again at its first attempt.

The retry is written to the service's audit trail (outbox.retry) with the actor cli:<your user name> (or the
name given with --as), as one from the admin API or the dashboard is.

Exit codes: 0 every id was retried; 1 some ids are unknown or not dead (the others were retried);
2 usage error.`,
  flags: {
    all: { type: "boolean", description: "retry every dead row" },
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "ids of dead rows, as printed by `jfast outbox dead`" }],
  examples: ["jfast outbox retry job:jfast.jobs:0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e", "jfast outbox retry --all"],
  docs: "jfast docs outbox#dead-rows",
  async run({ flags, positionals, io }) {
    const params = outboxSelection(flags.all, positionals, "retry");
    const actor = repairActor(flags.as);
    return withOutbox(resolveRoot(flags.root, io.cwd), async (_outbox, jfast) => {
      // The admin API's own operation, so the retry is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const { retried, missing } = await repairs.retryOutbox(params);
      for (const id of retried) io.out(`retried ${id}\n`);
      if (retried.length === 0 && missing.length === 0) io.out("no dead outbox rows to retry\n");
      for (const id of missing) io.err(`jfast: ${id} is not a dead outbox row\n`);
      return missing.length > 0 ? 1 : 0;
    });
  },
});
