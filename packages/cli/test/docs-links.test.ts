import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readDocs } from "../src/docs-pages.js";
import { REPO_ROOT, runJfast } from "./jfast-process.js";

/** Where users read jfast's messages: errors, logs, --help, the dashboard. */
const SOURCES = ["packages/runtime/src", "packages/cli/src", "apps/dashboard/src"];
const REFERENCE = /jfast docs ([a-z0-9-]+(?:#[a-z0-9-]+)?)/g;

async function references(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const dir of SOURCES) {
    for (const entry of await readdir(path.join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || entry.name.includes(".test.")) continue;
      const file = path.join(entry.parentPath, entry.name);
      for (const match of (await readFile(file, "utf8")).matchAll(REFERENCE)) {
        found.set(match[1]!, path.relative(REPO_ROOT, file));
      }
    }
  }
  return found;
}

describe("docs links", () => {
  it("every `jfast docs <page>#<section>` in a message names a page and section the packages ship", async () => {
    const found = await references();
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
