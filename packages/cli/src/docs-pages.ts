import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { CliError } from "./errors.js";

/**
 * The docs ship inside @jfast/runtime (`<package>/docs/*.md`); every hint and `--help` names a page as
 * `jfast docs <page>[#section]`, which this module resolves. One scheme, so a link works wherever the
 * packages are installed.
 */
export function docsDir(): string {
  const entry = createRequire(import.meta.url).resolve("@jfast/runtime");
  return path.join(path.dirname(entry), "..", "docs");
}

export function listPages(dir = docsDir()): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".md"))
    .map((name) => name.slice(0, -3))
    .sort();
}

export interface DocsPage {
  file: string;
  /** The whole page, or the section the anchor names (its heading down to the next heading as high). */
  text: string;
}

/** `topic` as hints write it: "worker", "worker#pausing-a-task". */
export function readDocs(topic: string, dir = docsDir()): DocsPage {
  const [page = "", anchor] = topic.replace(/^docs\//, "").replace(/\.md(?=#|$)/, "").split("#", 2);
  const file = path.join(dir, `${page}.md`);
  if (!/^[a-z0-9-]+$/.test(page) || !existsSync(file)) {
    throw new CliError(`no docs page "${page}"`, {
      code: "DOCS_NOT_FOUND",
      hint: `run \`jfast docs\` for the list of pages (${listPages(dir).join(", ")})`,
    });
  }
  const text = readFileSync(file, "utf8");
  if (!anchor) return { file, text };
  const section = sectionOf(text, anchor);
  if (section === null) {
    throw new CliError(`the page "${page}" has no section #${anchor}`, {
      code: "DOCS_NOT_FOUND",
      hint: `run \`jfast docs ${page}\` for the whole page`,
    });
  }
  return { file, text: section };
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function sectionOf(text: string, anchor: string): string | null {
  const lines = text.split("\n");
  let inFence = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence) continue;
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!heading) continue;
    const depth = heading[1]!.length;
    if (start >= 0 && depth <= level) return lines.slice(start, i).join("\n").trimEnd() + "\n";
    if (start < 0 && slug(heading[2]!) === anchor) {
      start = i;
      level = depth;
    }
  }
  return start >= 0 ? lines.slice(start).join("\n").trimEnd() + "\n" : null;
}
