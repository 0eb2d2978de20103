import module from "node:module";
import { readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Relative imports between the files of an installed package, resolved without Node's package.json lookup
 * (docs/deploy.md#start-up-on-node-22-and-later). On Node 22 and 24 each ES module file's format is read from its
 * package's package.json, and that lookup parses the whole file again for every module: drizzle-orm's is 179 KB
 * and a service on drizzle loads a few hundred of its files, so `import("drizzle-orm/pg-core")` alone took 0.66 s
 * and 276 MB of RSS on Node 24 (0.10 s and 64 MB with these hooks). Only a relative specifier (`./x.js`, `../x.mjs`)
 * from a file under node_modules, naming a file that exists, whose format its extension or an explicit "type"
 * decides, is resolved here — to the same URL and format Node gives it. Everything else (bare specifiers and
 * their "exports", a service's own files, TypeScript through tsx, require(), a package without "type", a missing
 * file and its error) goes to Node's resolver as before.
 *
 * Installed by the jfast binary before it loads anything else, on Node versions with `module.registerHooks`
 * (22.15 and later; Node 20 reads package.json once per package and needs none). JFAST_NODE_RESOLVE=1 turns it off.
 */
export function installFastImports(env: NodeJS.ProcessEnv = process.env): boolean {
  const registerHooks = (module as unknown as { registerHooks?: (hooks: { resolve: ResolveHook }) => unknown }).registerHooks;
  if (typeof registerHooks !== "function" || env.JFAST_NODE_RESOLVE === "1") return false;
  // Where symlinks are kept as they are, Node's own resolver knows which path to give.
  if (process.execArgv.some((arg) => arg.startsWith("--preserve-symlinks")) || env.NODE_PRESERVE_SYMLINKS === "1") return false;
  registerHooks({ resolve: resolveWithinPackage });
  return true;
}

interface ResolveContext {
  conditions: readonly string[];
  parentURL?: string | undefined;
  importAttributes?: Record<string, string>;
}
interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type ResolveHook = (specifier: string, context: ResolveContext, nextResolve: (specifier: string, context?: ResolveContext) => ResolveResult) => ResolveResult;

/** The resolve hook: see installFastImports. Exported for its tests. */
export const resolveWithinPackage: ResolveHook = (specifier, context, nextResolve) => {
  const resolved = withinPackage(specifier, context);
  return resolved ?? nextResolve(specifier, context);
};

function withinPackage(specifier: string, context: ResolveContext): ResolveResult | null {
  const parent = context.parentURL;
  if (!parent?.startsWith("file:") || !parent.includes("/node_modules/")) return null;
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return null;
  // require() searches extensions and folders: Node's own resolver does that.
  if (context.conditions.includes("require")) return null;
  if (context.importAttributes && Object.keys(context.importAttributes).length > 0) return null;
  const url = new URL(specifier, parent);
  // Node refuses an encoded "/" or "\\" in a path: its resolver says so.
  if (url.search !== "" || url.hash !== "" || /%2f|%5c/i.test(url.pathname)) return null;
  const file = fileURLToPath(url);
  const format = formatOf(file);
  if (format === null) return null;
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return null;
  const real = realpathSync(file);
  return { url: real === file ? url.href : pathToFileURL(real).href, format, shortCircuit: true };
}

function formatOf(file: string): "module" | "commonjs" | null {
  if (file.endsWith(".mjs")) return "module";
  if (file.endsWith(".cjs")) return "commonjs";
  if (file.endsWith(".js")) return typeOfPackage(path.dirname(file));
  return null;
}

/** "type" of the nearest package.json above `dir`, when it says "module" or "commonjs"; null for Node to decide. */
const typeByDir = new Map<string, "module" | "commonjs" | null>();

function typeOfPackage(start: string): "module" | "commonjs" | null {
  const walked: string[] = [];
  let type: "module" | "commonjs" | null = null;
  for (let dir = start; ; ) {
    const known = typeByDir.get(dir);
    if (known !== undefined) {
      type = known;
      break;
    }
    walked.push(dir);
    // Node does not take node_modules/package.json as a package's scope.
    if (path.basename(dir) === "node_modules") break;
    const text = readPackageJson(dir);
    if (text !== null) {
      type = typeIn(text);
      break;
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const dir of walked) typeByDir.set(dir, type);
  return type;
}

function readPackageJson(dir: string): string | null {
  try {
    return readFileSync(path.join(dir, "package.json"), "utf8");
  } catch {
    return null;
  }
}

function typeIn(text: string): "module" | "commonjs" | null {
  try {
    const type = (JSON.parse(text) as { type?: unknown }).type;
    // Without "type", Node 22+ may look at the source for import/export: left to it.
    return type === "module" || type === "commonjs" ? type : null;
  } catch {
    // Node reports an invalid package.json its own way.
    return null;
  }
}
