import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type * as TS from "typescript";
import { importDriver } from "../core/import-driver.js";
import { scanSource } from "./scan-source.js";
import type { ModuleFacts } from "./types.js";

const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
/** Tests and fixtures inside a module build events on purpose; they are not the module's contract. */
const NOT_MODULE_CODE = /(\.d\.[cm]?ts|\.(test|spec)\.[cm]?[jt]sx?)$/;
const SKIPPED_DIRS = new Set(["node_modules", "__tests__", "__fixtures__", "__mocks__", "dist", "build"]);

/**
 * Reads every source file under `<root>/modules/<name>/` (every module directory, with or without a tasks
 * file: a service file may publish) and attributes what it finds to that module. Nothing is imported or run.
 */
export async function scanModules(root: string): Promise<ModuleFacts[]> {
  const modulesDir = path.join(root, "modules");
  let names: string[];
  try {
    names = (await readdir(modulesDir, { withFileTypes: true }))
      .filter((d) => d.isDirectory() && !d.name.startsWith("."))
      .map((d) => d.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const ts = await loadTypescript();
  const modules: ModuleFacts[] = [];
  for (const name of names) {
    const facts: ModuleFacts = { name, files: [], events: [], jobs: [], tasks: [], subscriptions: [], schedules: [], unresolved: [] };
    for (const absolute of await sourceFiles(path.join(modulesDir, name))) {
      const file = path.relative(root, absolute).split(path.sep).join("/");
      const found = scanSource(ts, file, await readFile(absolute, "utf8"));
      facts.files.push(file);
      for (const e of found.events) facts.events.push({ file, ...e });
      for (const j of found.jobs) facts.jobs.push({ file, ...j });
      for (const t of found.tasks) facts.tasks.push({ file, ...t });
      for (const s of found.schedules) facts.schedules.push({ file, ...s });
      for (const u of found.unresolved) facts.unresolved.push({ file, ...u });
      for (const s of found.subscriptions) {
        facts.subscriptions.push({ file, line: s.line, type: s.type, session: s.session, task: subscriberTaskName(name, s) });
      }
    }
    modules.push(facts);
  }
  return modules;
}

/** The same name `nameSubscribers` gives at start-up; null for one that is not exported (start-up refuses it). */
function subscriberTaskName(module: string, s: { type: string; exportName: string | null; explicitName: string | null }): string | null {
  if (s.explicitName !== null) return s.explicitName.includes(".") ? `${s.type}->${s.explicitName}` : `${s.type}->${module}.${s.explicitName}`;
  return s.exportName === null ? null : `${s.type}->${module}.${s.exportName}`;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...(await sourceFiles(full)));
    } else if (entry.isFile() && SOURCE.test(entry.name) && !NOT_MODULE_CODE.test(entry.name)) {
      out.push(full);
    }
  }
  return out;
}

/** The compiler is large: loaded only when contracts are read, never by a service at start-up. */
async function loadTypescript(): Promise<typeof TS> {
  const loaded = (await importDriver("typescript", () => import("typescript"))) as typeof TS & { default?: typeof TS };
  return loaded.default ?? loaded;
}
