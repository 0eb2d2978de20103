import { formatModules } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS, readContracts } from "../contracts-access.js";

export default defineCommand({
  name: "contracts show",
  summary: "list each module's events, subscribers, tasks and dependencies",
  description: `
Lists every module: what it publishes (declared in contracts.toml, and what its code builds), what it
subscribes to and under which task name, the tasks it owns, what it depends on and which other modules'
tasks it enqueues. --json prints { source, modules, nodes, edges, violations }: the graph the dashboard
draws, with the checker's violations on the edges they concern.`,
  flags: {
    json: { type: "boolean", description: "print modules and the graph (nodes, edges, violations) as JSON" },
    root: ROOT_FLAG,
  },
  examples: ["jfast contracts show", "jfast contracts show --json | jq '.edges[] | select(.violations != [])'"],
  docs: "jfast docs contracts#jfast-contracts-show",
  async run({ flags, io }) {
    const inspection = await readContracts(flags.root, io);
    if (!inspection) return BROKEN_CONTRACTS;
    io.out(flags.json ? `${JSON.stringify(inspection.graph, null, 2)}\n` : `${formatModules(inspection)}\n`);
    return 0;
  },
});
