import { defineCommand } from "../command.js";
import { docsDir, listPages, readDocs } from "../docs-pages.js";
import { UsageError } from "../errors.js";

export default defineCommand({
  name: "docs",
  summary: "print a docs page, or one section of it (jfast docs worker#concurrency)",
  description: `
Every error hint and --help in jfast names its page as \`jfast docs <page>[#section]\`. This prints it from
the docs shipped in @jfast/runtime (node_modules/@jfast/runtime/docs/), so it matches the installed version.
Without a topic, lists the pages and where they are.`,
  flags: {},
  positionals: [{ name: "topic", variadic: true, description: "a page (worker) or a section of one (worker#pausing-a-task)" }],
  examples: ["jfast docs", "jfast docs getting-started", "jfast docs worker#pausing-a-task"],
  docs: "jfast docs cli#jfast-docs",
  async run({ positionals, io }) {
    if (positionals.length === 0) {
      const dir = docsDir();
      io.out(["Pages (jfast docs <page>):", ...listPages(dir).map((page) => `  ${page}`), "", `They are Markdown files in ${dir}`, ""].join("\n"));
      return 0;
    }
    if (positionals.length > 1) throw new UsageError(`one topic at a time (got "${positionals.join(" ")}")`);
    const page = readDocs(positionals[0]!);
    io.out(page.text.endsWith("\n") ? page.text : `${page.text}\n`);
    io.err(`(${page.file})\n`);
    return 0;
  },
});
