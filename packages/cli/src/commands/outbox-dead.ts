import { defineCommand, ROOT_FLAG } from "../command.js";
import { formatDeadOutboxRows } from "../format/outbox-dead.js";
import { withOutbox } from "../outbox-access.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "outbox dead",
  summary: "list outbox rows the relay set aside as dead, newest first, with the error that killed each",
  description: `
Lists dead outbox rows, newest death first: id (<kind>:<queue or topic>:<job or event id>), attempts, when it
died and the error that killed it. A row dies when its attempts are spent, or at its first attempt when no
retry can deliver it with this configuration (an event with no bus, a job for a queue this service does not
have). --json prints the full records: the body that was to be sent and every recorded error.`,
  flags: {
    json: { type: "boolean", description: "print the full records as JSON (body, lastError, errors)" },
    limit: { type: "integer", min: 1, default: 50, placeholder: "N", description: "how many to list" },
    root: ROOT_FLAG,
  },
  examples: ["jfast outbox dead", "jfast outbox dead --json | jq '.[].lastError.message'"],
  docs: "jfast docs outbox#dead-rows",
  async run({ flags, io }) {
    const dead = await withOutbox(resolveRoot(flags.root, io.cwd), (outbox) => outbox.listDead({ limit: flags.limit }));
    io.out(flags.json ? `${JSON.stringify(dead, null, 2)}\n` : formatDeadOutboxRows(dead));
    return 0;
  },
});
