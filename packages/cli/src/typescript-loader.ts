let registered: Promise<void> | null = null;

/**
 * Makes `import()` of a service's TypeScript work (modules/*\/tasks.ts, server.ts): Node 20 does not run .ts
 * by itself. Registered only by commands that load service code, so `--help` and usage errors stay fast.
 */
export function ensureTypeScriptLoader(): Promise<void> {
  registered ??= import("tsx/esm/api").then(({ register }) => {
    register();
  });
  return registered;
}
