#!/usr/bin/env node
// The jfast binary: runs the compiled CLI. Commands that load a service's TypeScript (modules/*/tasks.ts,
// server.ts) register tsx first (src/typescript-loader.ts), because Node 20 does not run .ts by itself.
import { existsSync } from "node:fs";

const entry = new URL("../dist/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("jfast: the CLI is not built (dist/main.js is missing)\n  fix: run `npm run build` at the repository root\n");
  process.exit(1);
}
// Before anything else is imported: the compiled code of the last start is read from Node's compile cache
// (src/compile-cache.ts; Node 22.1 and later), and an installed package's files resolve without Node re-reading its
// package.json for each of them (src/fast-imports.ts; Node 22.15 and later).
const { enableCompileCache } = await import(new URL("../dist/compile-cache.js", import.meta.url).href);
enableCompileCache();
const { installFastImports } = await import(new URL("../dist/fast-imports.js", import.meta.url).href);
installFastImports();
const { main } = await import(entry.href);
const debug = process.env.JFAST_DEBUG === "1" || process.env.JFAST_DEBUG === "true";
const code = await main(process.argv.slice(2), { debug });
// Exit explicitly: a job abandoned at shutdown (it ignored its abort signal) may still hold a timer, and
// the process must not outlive its grace period because of it. Flush stdout first (it may be a pipe).
process.stdout.write("", () => process.exit(code));
