import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { importDeclarations } from "../core/declarations.js";
import type { TaskDefinition } from "../core/task.js";
import { ConfigError, JfastError } from "../errors/jfast-error.js";
import { nameSubscribers } from "../local-events/subscribe.js";

export interface DiscoveredModule {
  name: string;
  file: string;
  definitions: TaskDefinition[];
  /** The tasks file's exports, by name (subscribers take their export name). */
  exports: Record<string, unknown>;
}

const CANDIDATES = ["tasks.ts", "tasks.js", "tasks.mts", "tasks.mjs", "tasks/index.ts", "tasks/index.js"];

/**
 * Imports every `<root>/modules/<name>/tasks.ts` (or `tasks/index.ts`). Nothing else is scanned.
 * A tasks file that fails to import stops start-up: the alternative is a task that silently never runs.
 */
export async function discoverModules(root: string): Promise<DiscoveredModule[]> {
  const modulesDir = path.join(root, "modules");
  let names: string[];
  try {
    names = (await readdir(modulesDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const found: DiscoveredModule[] = [];
  for (const name of names) {
    const file = await firstExisting(path.join(modulesDir, name), CANDIDATES);
    if (!file) continue;
    let result: { definitions: TaskDefinition[]; namespace: unknown };
    try {
      result = await importDeclarations(name, file, () => import(pathToFileURL(file).href));
    } catch (cause) {
      if (cause instanceof JfastError) throw cause;
      const unknownExtension = (cause as NodeJS.ErrnoException)?.code === "ERR_UNKNOWN_FILE_EXTENSION";
      throw new ConfigError(`modules/${name}: ${path.relative(root, file)} failed to import: ${(cause as Error)?.message ?? cause}`, {
        code: "MODULE_IMPORT_FAILED",
        hint: unknownExtension
          ? "install tsx (npm install --save-dev tsx) and run the service through the jfast CLI, or start node with --import tsx, or run what jfast build compiles"
          : `fix the error in ${path.relative(root, file)}; start-up stops so that no task silently goes missing`,
        docs: "jfast docs tasks#discovery",
        cause,
      });
    }
    for (const definition of result.definitions) definition.module ??= name;
    const exports = { ...(result.namespace as object) } as Record<string, unknown>;
    nameSubscribers({ module: name, file, definitions: result.definitions, exports });
    found.push({ name, file, definitions: result.definitions, exports });
  }
  return found;
}

async function firstExisting(dir: string, candidates: string[]): Promise<string | null> {
  for (const candidate of candidates) {
    const file = path.join(dir, candidate);
    try {
      if ((await stat(file)).isFile()) return file;
    } catch {
      // not this one
    }
  }
  return null;
}
