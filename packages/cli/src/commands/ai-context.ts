import { renderAiContext } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS, readContracts, readServiceSummary } from "../contracts-access.js";

export default defineCommand({
  name: "ai context",
  summary: "print a compact description of the service for whoever edits it next",
  description: `
Prints, in a few dense lines, what someone about to change the service needs to know: its plugins and
queue backend, every module with the events it publishes and subscribes to, its tasks and schedules, who
listens to each event, whether the contracts check passes, and the conventions the code follows. Read from
jfast.toml, contracts.toml and the module sources; nothing is run.`,
  flags: { root: ROOT_FLAG },
  examples: ["jfast ai context", "jfast ai context --root apps/example > context.txt"],
  docs: "jfast docs contracts#jfast-ai-context",
  async run({ flags, io }) {
    const inspection = await readContracts(flags.root, io);
    if (!inspection) return BROKEN_CONTRACTS;
    io.out(renderAiContext(inspection, await readServiceSummary(inspection.root, io)));
    return 0;
  },
});
