import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { renderContractsMarkdown } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { BROKEN_CONTRACTS, readContracts, readServiceSummary } from "../contracts-access.js";

export default defineCommand({
  name: "contracts md",
  summary: "write CONTRACTS.md: who publishes which event and who listens",
  description: `
Writes <root>/CONTRACTS.md from contracts.toml and the module sources: an events table (publishers and
subscriber tasks), each module's publishes, subscribes, tasks, schedules and dependencies, and any problems
the checker finds. The output has no dates, so it can be committed and reviewed as a diff; --check exits 1
when the committed file is out of date (for CI).`,
  flags: {
    stdout: { type: "boolean", description: "print the document instead of writing the file" },
    check: { type: "boolean", description: "write nothing; exit 1 when CONTRACTS.md differs from what would be written" },
    root: ROOT_FLAG,
  },
  examples: ["jfast contracts md", "jfast contracts md --check"],
  docs: "jfast docs contracts#jfast-contracts-md",
  async run({ flags, io }) {
    const inspection = await readContracts(flags.root, io);
    if (!inspection) return BROKEN_CONTRACTS;
    const text = renderContractsMarkdown(inspection, await readServiceSummary(inspection.root, io));
    const file = path.join(inspection.root, "CONTRACTS.md");
    if (flags.stdout) {
      io.out(text);
      return 0;
    }
    if (flags.check) {
      const current = await readFile(file, "utf8").catch(() => null);
      if (current === text) return 0;
      io.err(`jfast: ${current === null ? "CONTRACTS.md does not exist" : "CONTRACTS.md is out of date"}\n  fix: run jfast contracts md\n`);
      return 1;
    }
    await writeFile(file, text);
    io.out(`wrote ${path.relative(io.cwd, file) || file}\n`);
    return 0;
  },
});
