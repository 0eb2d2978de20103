import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast, type JfastProcess } from "./jfast-process.js";

/**
 * The jfast binary turns on Node's compile cache (src/compile-cache.ts, docs/deploy.md#the-compile-cache) on the
 * Node versions that have it, in Node's default folder (under TMPDIR) unless Node's own settings say otherwise, and
 * writes it once the service answers, so a service that is killed rather than stopped leaves it for the next start.
 * Run on this Node and, in CI, on Node 24 (JFAST_TEST_NODE24).
 */
const nodes = [...new Set([process.execPath, process.env.JFAST_TEST_NODE24].filter((n): n is string => Boolean(n)))];
const scratch = mkdtempSync(path.join(tmpdir(), "jfast-compile-cache-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let running: JfastProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const p of running) p.child.kill("SIGKILL");
  running = [];
  for (const c of cleanups.splice(0)) await c();
});

const TOML = `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`;

/** A TMPDIR of its own: Node's default cache folder is node-compile-cache in it. */
function freshTmp(): string {
  return mkdtempSync(path.join(scratch, "tmp-"));
}

/** Files under a folder, recursively (the cache keeps one folder per Node build). */
function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

const hasCache = (node: string) => execFileSync(node, ["-p", "typeof require('node:module').enableCompileCache"], { encoding: "utf8" }).trim() === "function";
/** No NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE from the machine running the tests (Node reads them even empty). */
const env = (extra: NodeJS.ProcessEnv) => ({ NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, ...extra });

describe.each(nodes)("the compile cache on %s", (node) => {
  it("is written where Node keeps it by default when Node has one, and not at all before", async () => {
    const tmp = freshTmp();
    const result = await runJfast(["--version"], { node, env: env({ TMPDIR: tmp }) });
    expect(result.code, result.stderr).toBe(0);
    const cached = filesUnder(path.join(tmp, "node-compile-cache"));
    if (hasCache(node)) expect(cached.length).toBeGreaterThan(0);
    else expect(cached).toEqual([]);
  });

  it("stays off with NODE_DISABLE_COMPILE_CACHE=1, and goes where NODE_COMPILE_CACHE says", async () => {
    const tmp = freshTmp();
    const off = await runJfast(["--version"], { node, env: env({ TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: "1" }) });
    expect(off.code, off.stderr).toBe(0);
    expect(filesUnder(tmp)).toEqual([]);
    const own = path.join(tmp, "own-cache");
    const named = await runJfast(["--version"], { node, env: env({ TMPDIR: tmp, NODE_COMPILE_CACHE: own }) });
    expect(named.code, named.stderr).toBe(0);
    expect(filesUnder(path.join(tmp, "node-compile-cache"))).toEqual([]);
    if (hasCache(node)) expect(filesUnder(own).length).toBeGreaterThan(0);
  });

  it("that cannot be written changes nothing: the command runs and says what it always says", async () => {
    const tmp = freshTmp();
    // Not a folder: the cache's folder cannot be made under it.
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "");
    const usual = await runJfast(["--version"], { node, env: env({ TMPDIR: freshTmp() }) });
    const unwritable = await runJfast(["--version"], { node, env: env({ TMPDIR: file }) });
    expect({ code: unwritable.code, stdout: unwritable.stdout, stderr: unwritable.stderr }).toEqual({ code: 0, stdout: usual.stdout, stderr: usual.stderr });
  });

  it("is written once the service answers: a service killed then leaves it for the next start", async () => {
    const service = await createServiceRoot({ "jfast.toml": TOML });
    cleanups.push(service.remove);
    const tmp = freshTmp();
    const p = startJfast(["start", "--root", service.root], { node, env: env({ TMPDIR: tmp, PORT: "0", HOST: "" }) });
    running.push(p);
    await p.waitFor('"msg":"http listening"');
    // The flush follows the line at once; give it a moment, then kill without a chance to write at exit.
    const cache = path.join(tmp, "node-compile-cache");
    for (let i = 0; i < 100 && hasCache(node) && filesUnder(cache).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    p.child.kill("SIGKILL");
    await p.exited;
    const cached = filesUnder(cache);
    if (!hasCache(node)) return expect(cached).toEqual([]);
    // The runtime's modules are among what was compiled: the cache holds far more than the CLI's --version needs.
    const versionOnly = freshTmp();
    await runJfast(["--version"], { node, env: env({ TMPDIR: versionOnly }) });
    const size = (files: string[]) => files.reduce((sum, f) => sum + statSync(f).size, 0);
    expect(size(cached)).toBeGreaterThan(size(filesUnder(path.join(versionOnly, "node-compile-cache"))));
  });
});
