import { AS_FLAG, defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { outboxSelection, withOutbox } from "../outbox-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "outbox discard",
  summary: "delete dead outbox rows for good",
  description: `
Deletes dead outbox rows permanently: the job or event they held is never sent. --all needs --yes.

The discard is written to the service's audit trail (outbox.discard) with the actor cli:<your user name> (or the
name given with --as), as one from the admin API or the dashboard is.

Exit codes: 0 every id was discarded; 1 some ids are unknown or not dead (the others were discarded);
2 usage error.`,
  flags: {
    all: { type: "boolean", description: "discard every dead row (needs --yes)" },
    yes: { type: "boolean", description: "confirm --all" },
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "ids of dead rows, as printed by `jfast outbox dead`" }],
  examples: ["jfast outbox discard event:receipts:5f0c…", "jfast outbox discard --all --yes"],
  docs: "jfast docs outbox#dead-rows",
  async run({ flags, positionals, io }) {
    const params = outboxSelection(flags.all, positionals, "discard");
    if (flags.all && !flags.yes) throw new UsageError("--all deletes every dead outbox row for good: add --yes to confirm");
    const actor = repairActor(flags.as);
    return withOutbox(resolveRoot(flags.root, io.cwd), async (_outbox, jfast) => {
      // The admin API's own operation, so the discard is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const { discarded, missing } = await repairs.discardOutbox(params);
      for (const id of discarded) io.out(`discarded ${id}\n`);
      if (discarded.length === 0 && missing.length === 0) io.out("no dead outbox rows to discard\n");
      for (const id of missing) io.err(`jfast: ${id} is not a dead outbox row\n`);
      return missing.length > 0 ? 1 : 0;
    });
  },
});
