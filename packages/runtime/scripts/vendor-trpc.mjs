// After tsc: @trpc/server's ES modules (about 250 KB, no dependencies of their own) are copied into
// dist/vendor/trpc-server and the compiled runtime imports them from there. A production install then does not
// get @trpc/server as a dependency, nor the TypeScript compiler it names as a required peer (23 MB): see
// docs/getting-started.md#production. Its types stay with the @trpc/server package (an optional peer, for
// whoever types against the admin router).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(here, "dist");
const source = path.join(path.dirname(createRequire(path.join(here, "package.json")).resolve("@trpc/server/package.json")), "dist");
const vendor = path.join(dist, "vendor", "trpc-server");
/** The package's entry points the runtime (or the vendored files themselves) import, by specifier. */
const ENTRIES = { "@trpc/server": "index.mjs", "@trpc/server/http": "http.mjs", "@trpc/server/adapters/fetch": "adapters/fetch/index.mjs" };

// The copy's version, and this script's own format (the number after it: raise it when the copy changes shape).
const version = `${JSON.parse(readFileSync(path.join(path.dirname(source), "package.json"), "utf8")).version} 2`;
/** Written last into a complete copy: which @trpc/server it holds. */
const STAMP = ".vendored";

// `npm pack` runs this as prepack, and packs of the runtime may run side by side (the e2e suites pack it from
// several test files at once) while other processes import the compiled runtime. So a copy already made of this
// version is left as it is, and a new one is made beside it and swapped in whole: a reader never sees the
// directory half-written, and two packs never delete each other's files.
function current() {
  try {
    return readFileSync(path.join(vendor, STAMP), "utf8") === version;
  } catch {
    return false;
  }
}

if (!current()) {
  const fresh = `${vendor}.${process.pid}.tmp`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true });
  cpSync(source, fresh, { recursive: true, filter: (file) => statSync(file).isDirectory() || file.endsWith(".mjs") });
  // Its licence travels with the copy.
  cpSync(path.join(path.dirname(source), "LICENSE"), path.join(fresh, "LICENSE"));
  // The source maps stay behind (they would double the copy), so the comments naming them go too: a tool that
  // follows them (vitest, a debugger) would otherwise report each missing map.
  stripSourceMapComments(fresh);
  // The vendored modules import one another by package name too.
  walk(fresh, fresh);
  writeFileSync(path.join(fresh, STAMP), version);
  const old = `${vendor}.${process.pid}.old`;
  if (existsSync(vendor)) renameSync(vendor, old);
  try {
    renameSync(fresh, vendor);
  } catch (error) {
    // Another pack swapped its own complete copy in first: keep that one.
    if (!current()) throw error;
    rmSync(fresh, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
}

function stripSourceMapComments(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) stripSourceMapComments(full);
    else if (entry.name.endsWith(".mjs")) {
      const text = readFileSync(full, "utf8");
      const next = text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
      if (next !== text) writeFileSync(full, next);
    }
  }
}

/** Points a module's `@trpc/server` imports at the copy whose root is `root`. */
function rewrite(file, root) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(/(from\s*|import\s*\(\s*)(["'])(@trpc\/server(?:\/[a-z/]+)?)\2/g, (whole, lead, quote, specifier) => {
    const entry = ENTRIES[specifier];
    if (!entry) throw new Error(`${path.relative(here, file)} imports ${specifier}, which scripts/vendor-trpc.mjs does not vendor`);
    let relative = path.relative(path.dirname(file), path.join(root, entry)).split(path.sep).join("/");
    if (!relative.startsWith(".")) relative = `./${relative}`;
    return `${lead}${quote}${relative}${quote}`;
  });
  if (next !== text) writeFileSync(file, next);
}

function walk(dir, root) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (path.join(dir, entry.name) !== path.join(dist, "vendor")) walk(full, root);
    } else if (entry.name.endsWith(".js") || entry.name.endsWith(".mjs")) rewrite(full, root);
  }
}
// The compiled runtime: dist/vendor (the copy, and any other pack's copy being made) is not walked.
walk(dist, vendor);
// stderr: npm pack --json prints its JSON on stdout after prepack.
console.error(`vendored @trpc/server into ${path.relative(here, vendor)}`);
