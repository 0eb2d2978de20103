import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type * as TS from "typescript";
import { importDriver } from "../core/import-driver.js";
import { scanSource } from "./scan-source.js";
import type { ModuleFacts } from "./types.js";

const SOURCE = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
/** Tests and fixtures inside a module build events on purpose; they are not the module's contract. */
const NOT_MODULE_CODE = /(\.d\.[cm]?ts|\.(test|spec)\.[cm]?[jt]sx?)$/;
const SKIPPED_DIRS = new Set(["node_modules", "__tests__", "__fixtures__", "__mocks__", "dist", "build"]);

/** One file of a module, its path relative to the service root ("modules/alert/tasks.ts"). */
export interface ModuleSource {
  path: string;
  text: string;
}

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
  const sources: ModuleSource[] = [];
  for (const name of names) {
    for (const absolute of await sourceFiles(path.join(modulesDir, name))) {
      sources.push({ path: path.relative(root, absolute).split(path.sep).join("/"), text: await readFile(absolute, "utf8") });
    }
  }
  return scanModuleSources({ modules: names, sources });
}

/**
 * The same reading over files that come from elsewhere (a git commit): `modules` are the directory names
 * under modules/, `sources` the files `selectModuleFiles` picked.
 */
export async function scanModuleSources(params: { modules: readonly string[]; sources: readonly ModuleSource[] }): Promise<ModuleFacts[]> {
  const ts = await loadTypescript();
  const modules: ModuleFacts[] = [];
  for (const name of [...params.modules].sort()) {
    const facts: ModuleFacts = { name, files: [], events: [], jobs: [], tasks: [], subscriptions: [], schedules: [], consumes: [], produces: [], unresolved: [] };
    for (const { path: file, text } of params.sources.filter((s) => s.path.startsWith(`modules/${name}/`))) {
      const found = scanSource(ts, file, text);
      facts.files.push(file);
      for (const e of found.events) facts.events.push({ file, ...e });
      for (const j of found.jobs) facts.jobs.push({ file, ...j });
      for (const t of found.tasks) facts.tasks.push({ file, ...t });
      for (const s of found.schedules) facts.schedules.push({ file, ...s });
      for (const u of found.unresolved) facts.unresolved.push({ file, ...u });
      for (const c of found.consumes) facts.consumes.push({ file, ...c });
      for (const p of found.produces) facts.produces.push({ file, ...p });
      for (const s of found.subscriptions) {
        facts.subscriptions.push({ file, line: s.line, type: s.type, session: s.session, task: subscriberTaskName(name, s) });
      }
    }
    modules.push(facts);
  }
  return modules;
}

/**
 * Of the files under `modules/` (paths relative to the service root), the module directories and the files
 * the checker reads, in the order it reads them: the same choice `scanModules` makes while walking the disk.
 */
export function selectModuleFiles(paths: readonly string[]): { modules: string[]; sources: string[] } {
  const modules = new Set<string>();
  const sources: string[] = [];
  for (const file of paths) {
    const [top, name, ...rest] = file.split("/");
    if (top !== "modules" || name === undefined || rest.length === 0 || name.startsWith(".")) continue;
    modules.add(name);
    const dirs = rest.slice(0, -1);
    const base = rest[rest.length - 1]!;
    if (dirs.some((d) => d.startsWith(".") || SKIPPED_DIRS.has(d))) continue;
    if (isModuleCode(base)) sources.push(file);
  }
  return { modules: [...modules].sort(), sources: sources.sort(walkOrder) };
}

/** The order the disk walk reads files in (a directory's entries by name), so both report the same first site. */
function walkOrder(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return x.length - y.length;
}

function isModuleCode(fileName: string): boolean {
  return !fileName.startsWith(".") && SOURCE.test(fileName) && !NOT_MODULE_CODE.test(fileName);
}

/** The same name `nameSubscribers` gives at start-up; null for one that is not exported (start-up refuses it). */
function subscriberTaskName(module: string, s: { type: string; exportName: string | null; explicitName: string | null }): string | null {
  if (s.explicitName !== null) return s.explicitName.includes(".") ? `${s.type}->${s.explicitName}` : `${s.type}->${module}.${s.explicitName}`;
  return s.exportName === null ? null : `${s.type}->${module}.${s.exportName}`;
}

/**
 * The files an inspection of `root` reads, each with its size and change time: while the stamp is the same, so is
 * the graph (the dashboard's contracts view re-reads only then). Costs a directory walk, not a parse.
 */
export async function contractsStamp(root: string): Promise<string> {
  const files = [path.join(root, "contracts.toml"), ...(await sourceFiles(path.join(root, "modules")).catch(() => []))];
  const parts = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (s) => `${file}:${s.size}:${s.mtimeMs}`,
        () => `${file}:-`,
      ),
    ),
  );
  return parts.join("\n");
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...(await sourceFiles(full)));
    } else if (entry.isFile() && isModuleCode(entry.name)) {
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
