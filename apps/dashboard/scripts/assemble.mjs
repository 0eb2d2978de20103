// After `next build`: dist/ becomes what the package ships — the standalone server with the node_modules it
// traced, the static assets beside it (Next's standalone output leaves those out), and the docs page.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.dirname(path.dirname(here));
const standalone = path.join(here, ".next", "standalone");
if (!existsSync(standalone)) throw new Error(`no ${standalone}: run next build first (next.config.ts has output: "standalone")`);
const dist = path.join(here, "dist");
const appDir = path.join("standalone", path.relative(repo, here));
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
cpSync(standalone, path.join(dist, "standalone"), { recursive: true, verbatimSymlinks: true });
// The tracer copies the whole app folder (the config file's path is dynamic: lib/config.mjs) and sharp, which
// serves only image optimisation (off here) and is native code for one platform. The server needs neither.
const keep = new Set([".next", "server.js", "package.json"]);
for (const entry of readdirSync(path.join(dist, appDir))) if (!keep.has(entry)) rmSync(path.join(dist, appDir, entry), { recursive: true, force: true });
for (const unused of ["sharp", "@img", "detect-libc", "semver"]) rmSync(path.join(dist, "standalone", "node_modules", unused), { recursive: true, force: true });
cpSync(path.join(here, ".next", "static"), path.join(dist, appDir, ".next", "static"), { recursive: true });
if (existsSync(path.join(here, "public"))) cpSync(path.join(here, "public"), path.join(dist, appDir, "public"), { recursive: true });
cpSync(path.join(repo, "docs", "dashboard.md"), path.join(dist, "dashboard.md"));
writeFileSync(path.join(dist, "manifest.json"), `${JSON.stringify({ appDir }, null, 2)}\n`);
console.log(`dist/ assembled: ${appDir}`);
