import { opendir } from "node:fs/promises";
import path from "node:path";

let registered: Promise<void> | null = null;
let missing = false;
let skipped = false;

/** Folders never holding the service's own sources. */
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".jfast", ".turbo", ".next"]);
/** Past this many directory entries the search stops and assumes TypeScript: registering tsx is the safe side. */
const SEARCH_LIMIT = 5000;
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;
const DECLARATION = /\.d\.(ts|mts|cts)$/;

/**
 * Makes `import()` of a service's TypeScript work (modules/*\/tasks.ts, server.ts): Node 20 does not run .ts
 * by itself. Registered only by commands that load service code, so `--help` and usage errors stay fast.
 * tsx is an optional peer: a compiled service (`jfast build`) runs without it, so a production install need not
 * have it (docs/getting-started.md#production). Without it nothing is registered, and a .ts file that then fails
 * to load says to install it (typeScriptLoaderMissing).
 *
 * With `root`, tsx is registered only when the service root holds TypeScript: a compiled folder skips it, since
 * loading tsx and esbuild and routing every later import through its hooks is a good part of start-up
 * (bench/analysis.md#start-up).
 */
export async function ensureTypeScriptLoader(root?: string): Promise<void> {
  if (registered) return registered;
  if (root !== undefined && !(await holdsTypeScript(root))) {
    skipped = true;
    return;
  }
  registered = import("tsx/esm/api").then(
    ({ register }) => {
      register();
    },
    (error: NodeJS.ErrnoException) => {
      if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
      missing = true;
    },
  );
  return registered;
}

/** True once ensureTypeScriptLoader found no tsx installed. */
export function typeScriptLoaderMissing(): boolean {
  return missing;
}

/** True when ensureTypeScriptLoader left tsx out because the service root holds no TypeScript. */
export function typeScriptLoaderSkipped(): boolean {
  return skipped && !registered;
}

/** Whether `root` (its node_modules, .git and .jfast left out) holds a TypeScript source; declarations do not count. */
async function holdsTypeScript(root: string): Promise<boolean> {
  const pending = [root];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries;
    try {
      entries = await opendir(dir);
    } catch {
      continue;
    }
    for await (const entry of entries) {
      if (++seen > SEARCH_LIMIT) return true;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) pending.push(path.join(dir, entry.name));
      } else if (TYPESCRIPT.test(entry.name) && !DECLARATION.test(entry.name)) return true;
    }
  }
  return false;
}
