import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { JfastError } from "../../errors/jfast-error.js";
import { Worker as Thread, type WorkerOptions as ThreadOptions } from "node:worker_threads";

/**
 * Starts a worker thread running `module` (a file URL). Built, that is a .js file Node runs as it is. From source
 * (the runtime's own tests) it is a .ts file: the thread first registers the TypeScript loader the runtime's
 * development dependencies carry. `typescript` also asks for it when the thread imports a service's .ts files.
 */
export function startThread(module: string, options: ThreadOptions & { typescript?: boolean } = {}): Thread {
  const { typescript, ...rest } = options;
  if (!module.endsWith(".ts") && !typescript) return new Thread(new URL(module), rest);
  const loader = typeScriptLoader("./esm/api");
  const bootstrap = `import(${JSON.stringify(loader)}).then((m) => { (m.register ?? m.default.register)(); return import(${JSON.stringify(module)}); })`;
  return new Thread(bootstrap, { ...rest, eval: true });
}

/**
 * The file URL of an ES module entry of tsx (`"."`: what `node --import` takes; `"./esm/api"`: its `register()`).
 * The CommonJS entries cannot register the ESM hooks.
 */
export function typeScriptLoader(entry: "." | "./esm/api"): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  } catch {
    throw new JfastError("a TypeScript tasks file runs in a thread or a child process through tsx, which is not installed", {
      code: "DRIVER_MISSING",
      hint: "npm install tsx (the jfast CLI depends on it; a service that embeds the runtime alone needs it too)",
      docs: "jfast docs tasks#isolated-handlers",
    });
  }
  const { exports } = JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, string | { import: { default: string } }> };
  const target = exports[entry]!;
  return pathToFileURL(path.join(path.dirname(manifest), typeof target === "string" ? target : target.import.default)).href;
}
