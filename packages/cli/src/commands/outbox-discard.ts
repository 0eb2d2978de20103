import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { outboxSelection, withOutbox } from "../outbox-access.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "outbox discard",
  summary: "delete dead outbox rows for good",
  description: `
Deletes dead outbox rows permanently: the job or event they held is never sent. --all needs --yes.

Exit codes: 0 every id was discarded; 1 some ids are unknown or not dead (the others were discarded);
2 usage error.`,
  flags: {
    all: { type: "boolean", description: "discard every dead row (needs --yes)" },
    yes: { type: "boolean", description: "confirm --all" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "ids of dead rows, as printed by `jfast outbox dead`" }],
  examples: ["jfast outbox discard event:receipts:5f0c…", "jfast outbox discard --all --yes"],
  docs: "jfast docs outbox#dead-rows",
  async run({ flags, positionals, io }) {
    const params = outboxSelection(flags.all, positionals, "discard");
    if (flags.all && !flags.yes) throw new UsageError("--all deletes every dead outbox row for good: add --yes to confirm");
    return withOutbox(resolveRoot(flags.root, io.cwd), async (outbox) => {
      const { discarded, missing } = await outbox.discardDead(params);
      for (const id of discarded) io.out(`discarded ${id}\n`);
      if (discarded.length === 0 && missing.length === 0) io.out("no dead outbox rows to discard\n");
      for (const id of missing) io.err(`jfast: ${id} is not a dead outbox row\n`);
      return missing.length > 0 ? 1 : 0;
    });
  },
});
