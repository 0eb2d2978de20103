// After tsc: @trpc/server's ES modules (about 250 KB, no dependencies of their own) are copied into
// dist/vendor/trpc-server and the compiled runtime imports them from there. A production install then does not
// get @trpc/server as a dependency, nor the TypeScript compiler it names as a required peer (23 MB): see
// docs/getting-started.md#production. Its types stay with the @trpc/server package (an optional peer, for
// whoever types against the admin router).
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(here, "dist");
const source = path.join(path.dirname(createRequire(path.join(here, "package.json")).resolve("@trpc/server/package.json")), "dist");
const vendor = path.join(dist, "vendor", "trpc-server");
/** The package's entry points the runtime (or the vendored files themselves) import, by specifier. */
const ENTRIES = { "@trpc/server": "index.mjs", "@trpc/server/http": "http.mjs", "@trpc/server/adapters/fetch": "adapters/fetch/index.mjs" };

rmSync(vendor, { recursive: true, force: true });
mkdirSync(vendor, { recursive: true });
cpSync(source, vendor, { recursive: true, filter: (file) => statSync(file).isDirectory() || file.endsWith(".mjs") });
// Its licence travels with the copy.
cpSync(path.join(path.dirname(source), "LICENSE"), path.join(vendor, "LICENSE"));

function rewrite(file) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(/(from\s*|import\s*\(\s*)(["'])(@trpc\/server(?:\/[a-z/]+)?)\2/g, (whole, lead, quote, specifier) => {
    const entry = ENTRIES[specifier];
    if (!entry) throw new Error(`${path.relative(here, file)} imports ${specifier}, which scripts/vendor-trpc.mjs does not vendor`);
    let relative = path.relative(path.dirname(file), path.join(vendor, entry)).split(path.sep).join("/");
    if (!relative.startsWith(".")) relative = `./${relative}`;
    return `${lead}${quote}${relative}${quote}`;
  });
  if (next !== text) writeFileSync(file, next);
}

function walk(dir, test) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, test);
    else if (test(entry.name)) rewrite(full);
  }
}
walk(dist, (name) => name.endsWith(".js") || name.endsWith(".mjs"));
// stderr: npm pack --json prints its JSON on stdout after prepack.
console.error(`vendored @trpc/server into ${path.relative(here, vendor)}`);
