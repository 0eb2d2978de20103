import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createJfast, createLogger, loadConfig, type Jfast } from "@jfast/runtime";
import { CliError } from "./errors.js";
import { ensureTypeScriptLoader, typeScriptLoaderMissing, typeScriptLoaderSkipped } from "./typescript-loader.js";

const DOCS = "jfast docs cli#the-service-entry-file";

/** Files the CLI looks for, in order, as the service's entry (providers, start hook, HTTP app). */
export const ENTRY_CANDIDATES = ["server.ts", "server.mts", "server.js", "server.mjs", "app.ts", "app.mts", "app.js", "app.mjs"] as const;

/**
 * The optional named exports of `<root>/server.ts` (or `app.ts`):
 *   providers  an object, or a function returning one, passed to createJfast({ providers }) in every process
 *   onStart    called with the started app (create the service's own tables, warm caches)
 *   createApp  returns the HTTP app (Hono or any fetch handler, Express, Koa, Fastify, Nest, a Node listener: see
 *              web-app.ts); served by `jfast start` and `jfast dev`
 */
export interface ServiceEntry {
  file: string | null;
  providers: (params: { root: string }) => Promise<Record<string, unknown>>;
  onStart: ((jfast: Jfast) => unknown) | null;
  createApp: ((jfast: Jfast) => unknown) | null;
}

/** The service root: `--root` or the working directory. It must hold jfast.toml. */
export function resolveRoot(flag: string | undefined, cwd: string): string {
  const root = path.resolve(cwd, flag ?? ".");
  if (!existsSync(path.join(root, "jfast.toml"))) {
    throw new CliError(`no jfast.toml in ${root}`, {
      code: "NO_SERVICE_ROOT",
      hint: flag
        ? `point --root at the directory that holds the service's jfast.toml`
        : `run the command in a service directory (one with jfast.toml), or pass --root <dir> (e.g. --root apps/example)`,
      docs: "jfast docs cli#the-service-root",
    });
  }
  return root;
}

export async function loadServiceEntry(root: string): Promise<ServiceEntry> {
  const file = ENTRY_CANDIDATES.map((name) => path.join(root, name)).find((candidate) => existsSync(candidate)) ?? null;
  if (!file) return { file: null, providers: async () => ({}), onStart: null, createApp: null };
  const relative = path.relative(root, file);
  await ensureTypeScriptLoader(root);
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (cause) {
    throw new CliError(`${relative} failed to import: ${(cause as Error)?.message ?? cause}`, {
      code: "ENTRY_IMPORT_FAILED",
      hint: /require\(\)|ES Module/.test(String((cause as Error)?.message))
        ? `add "type": "module" to the service's package.json: jfast loads services as ES modules`
        : (cause as NodeJS.ErrnoException)?.code === "ERR_UNKNOWN_FILE_EXTENSION" && typeScriptLoaderMissing()
          ? "install tsx (npm install --save-dev tsx) for jfast to run TypeScript, or run what jfast build compiles (jfast start --root dist)"
          : (cause as NodeJS.ErrnoException)?.code === "ERR_UNKNOWN_FILE_EXTENSION" && typeScriptLoaderSkipped()
            ? `${relative} imports TypeScript from outside the service root, which holds none, so jfast did not load tsx: compile that code too, or register tsx yourself (node --import tsx node_modules/.bin/jfast …)`
            : `fix the error in ${relative} (run with --verbose for the stack)`,
      docs: DOCS,
      cause,
    });
  }
  const { providers, onStart, createApp } = namespace;
  for (const [name, value] of Object.entries({ onStart, createApp })) {
    if (value !== undefined && typeof value !== "function") {
      throw new CliError(`${relative} exports ${name}, but it is not a function`, {
        code: "ENTRY_INVALID",
        hint: `export function ${name}(jfast) { ... }`,
        docs: DOCS,
      });
    }
  }
  if (providers !== undefined && typeof providers !== "function" && (typeof providers !== "object" || providers === null)) {
    throw new CliError(`${relative} exports providers, but it is neither an object nor a function returning one`, {
      code: "ENTRY_INVALID",
      hint: "export const providers = { mailer: createMailer() }",
      docs: DOCS,
    });
  }
  return {
    file,
    async providers(params) {
      const value = typeof providers === "function" ? await providers(params) : (providers ?? {});
      if (typeof value !== "object" || value === null) {
        throw new CliError(`providers() in ${relative} must return an object of providers by name`, {
          code: "ENTRY_INVALID",
          hint: "return { mailer: createMailer() }",
          docs: DOCS,
        });
      }
      return value as Record<string, unknown>;
    },
    onStart: (onStart as ServiceEntry["onStart"]) ?? null,
    createApp: (createApp as ServiceEntry["createApp"]) ?? null,
  };
}

/**
 * Builds and starts the service exactly as the API process does: same jfast.toml, same modules, same
 * providers. `entry: false` skips server.ts (inspection commands need only the queue). `quiet` keeps the
 * runtime's info logs off stderr for commands whose output is the point.
 */
export async function openService(params: {
  root: string;
  entry: boolean;
  quiet?: boolean;
  /** false for inspection commands: no Kafka consumers, scheduler or outbox relay (see CreateJfastOptions). */
  background?: boolean;
}): Promise<{ jfast: Jfast; entry: ServiceEntry | null }> {
  await ensureTypeScriptLoader(params.root);
  const entry = params.entry ? await loadServiceEntry(params.root) : null;
  const providers = entry ? await entry.providers({ root: params.root }) : {};
  let logger;
  if (params.quiet) {
    const config = await loadConfig({ root: params.root });
    logger = createLogger({ service: config.service.name, level: config.logLevel === "error" || config.logLevel === "silent" ? config.logLevel : "warn" });
  }
  const jfast = await createJfast({ root: params.root, providers, ...(logger ? { logger } : {}), ...(params.background === false ? { background: false } : {}) });
  try {
    await jfast.start();
    if (entry?.onStart) await entry.onStart(jfast);
  } catch (error) {
    await jfast.stop().catch(() => undefined);
    throw error;
  }
  return { jfast, entry };
}
