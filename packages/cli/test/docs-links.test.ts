import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readDocs } from "../src/docs-pages.js";
import { REPO_ROOT, runJfast } from "./jfast-process.js";

/** Where users read jfast's messages: errors, logs, --help, the dashboard. */
const SOURCES = ["packages/runtime/src", "packages/cli/src", "apps/dashboard/src"];
const REFERENCE = /jfast docs ([a-z0-9-]+(?:#[a-z0-9-]+)?)/g;
/** Where readers of the code follow `docs/<page>.md#<anchor>` from a comment. */
const CODE = [...SOURCES, "packages/runtime/test", "packages/cli/test", "apps/example", "apps/shipping", "bench", "e2e", "scripts"];
const COMMENT_REFERENCE = /docs\/([a-z0-9-]+)\.md#([a-z0-9-]+)/g;
const DOCS = path.join(REPO_ROOT, "docs");

async function references(params: { dirs: string[]; pattern: RegExp; tests: boolean }): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const dir of params.dirs) {
    for (const entry of await readdir(path.join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(tsx?|mjs)$/.test(entry.name) || (!params.tests && entry.name.includes(".test."))) continue;
      if (/(^|\/)(node_modules|dist|\.next|results)(\/|$)/.test(path.relative(REPO_ROOT, entry.parentPath))) continue;
      const file = path.join(entry.parentPath, entry.name);
      for (const match of (await readFile(file, "utf8")).matchAll(params.pattern)) {
        found.set(match[2] === undefined ? match[1]! : `${match[1]}#${match[2]}`, path.relative(REPO_ROOT, file));
      }
    }
  }
  return found;
}

/** A heading of the page (what `jfast docs` finds), or an explicit `<a id="…">` anchor (what a browser finds). */
async function anchorExists(topic: string): Promise<boolean> {
  try {
    readDocs(topic, DOCS);
    return true;
  } catch {
    const [page, anchor] = topic.split("#") as [string, string];
    const text = await readFile(path.join(DOCS, `${page}.md`), "utf8").catch(() => "");
    return text.includes(`<a id="${anchor}"></a>`);
  }
}

describe("docs links", () => {
  it("every `jfast docs <page>#<section>` in a message names a page and section the packages ship", async () => {
    const found = await references({ dirs: SOURCES, pattern: REFERENCE, tests: false });
    expect(found.size).toBeGreaterThan(50);
    const broken = [...found].filter(([topic]) => {
      try {
        readDocs(topic);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken.map(([topic, file]) => `${topic} (${file})`)).toEqual([]);
  });

  it("every `docs/<page>.md#<anchor>` in the code names a heading (or an explicit anchor) of that page in docs/", async () => {
    const found = await references({ dirs: CODE, pattern: COMMENT_REFERENCE, tests: true });
    expect(found.size).toBeGreaterThan(40);
    const broken: string[] = [];
    for (const [topic, file] of found) if (!(await anchorExists(topic))) broken.push(`docs/${topic.replace("#", ".md#")} (${file})`);
    expect(broken).toEqual([]);
  });

  it("jfast docs prints a section from the installed runtime's docs/", async () => {
    const result = await runJfast(["docs", "worker#pausing-a-task"]);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe("## Pausing a task");
    expect(result.stderr).toContain(path.join("runtime", "docs", "worker.md"));
  });

  it("an unknown page or section is an error that lists what exists", async () => {
    const page = await runJfast(["docs", "nope"]);
    expect(page.code).toBe(1);
    expect(page.stderr).toContain('no docs page "nope"');
    expect(page.stderr).toContain("getting-started, ");
    const section = await runJfast(["docs", "worker#nope"]);
    expect(section.code).toBe(1);
    expect(section.stderr).toContain("has no section #nope");
  });
});
