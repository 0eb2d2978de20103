import { AS_FLAG, defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { explainMissing, withQueue } from "../queue-access.js";
import { cliRepairs, repairActor } from "../repairs.js";
import { resolveRoot } from "../service.js";
import { selection } from "./jobs-retry.js";

export default defineCommand({
  name: "jobs discard",
  summary: "delete dead letters for good",
  description: `
Deletes dead letters permanently (their payload and error history go with them). --all needs --yes.
The discard is written to the service's audit trail with the actor cli:<your user name> (or the name given
with --as), as a discard from the admin API or the dashboard is.

Exit codes: 0 every id was discarded; 1 some ids are unknown or not dead (the others were discarded);
2 usage error.`,
  flags: {
    all: { type: "boolean", description: "discard every dead letter (needs --yes)" },
    yes: { type: "boolean", description: "confirm --all" },
    queue: QUEUE_FLAG,
    as: AS_FLAG,
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", variadic: true, description: "ids of dead letters, as printed by `jfast jobs dead`" }],
  examples: ["jfast jobs discard 0b6c7c1e-58d2-4c61-9a55-2f0f3c1f7f0e", "jfast jobs discard --all --yes"],
  docs: "jfast docs cli#jfast-jobs-discard",
  async run({ flags, positionals, io }) {
    const params = selection(flags.all, positionals, "discard");
    if (flags.all && !flags.yes) throw new UsageError("--all deletes every dead letter for good: add --yes to confirm");
    const actor = repairActor(flags.as);
    return withQueue(resolveRoot(flags.root, io.cwd), async (backend, jfast) => {
      // The admin API's own operation, so the discard is audited like one made there.
      const repairs = await cliRepairs(jfast, io, actor);
      const { discarded, missing } = await repairs.discardDead({ ...params, ...(flags.queue === undefined ? {} : { queue: flags.queue }) });
      for (const id of discarded) io.out(`discarded ${id}\n`);
      if (discarded.length === 0 && missing.length === 0) io.out("no dead letters to discard\n");
      for (const line of await explainMissing(backend, missing)) io.err(`${line}\n`);
      return missing.length > 0 ? 1 : 0;
    }, flags.queue);
  },
});
