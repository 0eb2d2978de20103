import { formatFindings } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS, readContracts } from "../contracts-access.js";

export default defineCommand({
  name: "contracts check",
  summary: "check contracts.toml against what the modules publish, subscribe and enqueue",
  description: `
Reads contracts.toml and the sources under modules/ (nothing is run) and reports orphan-subscription,
undeclared-event, undeclared-dependency, unknown-module and unknown-task, each with the file and line and
the fix. Exit code 0 when clean, 1 when anything is found, 2 when contracts.toml is broken.
--json prints an array of { rule, module, subject, message, fix, file, line }.`,
  flags: {
    json: { type: "boolean", description: "print the findings as a JSON array" },
    root: ROOT_FLAG,
  },
  examples: ["jfast contracts check", "jfast contracts check --json | jq '.[].fix'"],
  docs: "jfast docs contracts#jfast-contracts-check",
  async run({ flags, io }) {
    const inspection = await readContracts(flags.root, io);
    if (!inspection) return BROKEN_CONTRACTS;
    io.out(flags.json ? `${JSON.stringify(inspection.findings, null, 2)}\n` : `${formatFindings(inspection)}\n`);
    if (flags.json) for (const note of inspection.notes) io.err(`note: ${note}\n`);
    return inspection.findings.length === 0 ? 0 : 1;
  },
});
