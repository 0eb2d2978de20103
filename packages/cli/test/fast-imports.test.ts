import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { resolveWithinPackage } from "../src/fast-imports.js";

/**
 * The jfast binary resolves the relative imports between an installed package's files itself (src/fast-imports.ts),
 * without Node re-reading the package's package.json for each: it must give exactly what Node gives, and leave
 * everything it is not sure of to Node.
 */
const root = mkdtempSync(path.join(tmpdir(), "jfast-fast-imports-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const files: Record<string, string> = {
  "node_modules/esm-pkg/package.json": JSON.stringify({ name: "esm-pkg", type: "module", exports: { ".": "./index.js", "./*": "./*" } }),
  "node_modules/esm-pkg/index.js": `import "./lib/a.js";\nimport "./lib/b.cjs";\nimport "./lib/c.mjs";\nimport "./lib/nested/e.js";\nimport "./lib/link.js";\nglobalThis.loaded.push(import.meta.url);\n`,
  "node_modules/esm-pkg/lib/a.js": `import "../lib/d.js";\nglobalThis.loaded.push(import.meta.url);\n`,
  "node_modules/esm-pkg/lib/d.js": `globalThis.loaded.push(import.meta.url);\n`,
  "node_modules/esm-pkg/lib/b.cjs": `globalThis.loaded.push("cjs " + __filename);\n`,
  "node_modules/esm-pkg/lib/c.mjs": `globalThis.loaded.push(import.meta.url);\n`,
  "node_modules/esm-pkg/lib/nested/package.json": JSON.stringify({ type: "commonjs" }),
  "node_modules/esm-pkg/lib/nested/e.js": `globalThis.loaded.push("cjs " + __filename);\n`,
  "node_modules/esm-pkg/missing.js": `import "./lib/not-there.js";\n`,
  "node_modules/esm-pkg/folder.js": `import "./lib";\n`,
  "node_modules/plain-pkg/package.json": JSON.stringify({ name: "plain-pkg" }),
  "node_modules/plain-pkg/index.js": `module.exports = require("./other");\n`,
  "node_modules/plain-pkg/other.js": `globalThis.loaded.push("cjs " + __filename);\nmodule.exports = 1;\n`,
  "own/app.js": `import "./helper.js";\nglobalThis.loaded.push(import.meta.url);\n`,
  "own/helper.js": `globalThis.loaded.push(import.meta.url);\n`,
  "own/package.json": JSON.stringify({ type: "module" }),
};
for (const [name, text] of Object.entries(files)) {
  mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
  writeFileSync(path.join(root, name), text);
}
// A file reached through a symlink is one module, at its real path, as Node's resolver gives it.
symlinkSync(path.join(root, "node_modules/esm-pkg/lib/d.js"), path.join(root, "node_modules/esm-pkg/lib/link.js"));

const esmPkg = pathToFileURL(path.join(root, "node_modules/esm-pkg/index.js")).href;
const ESM = { conditions: ["node", "import"], parentURL: esmPkg };
const toNode = () => {
  throw new Error("left to Node");
};

describe("resolving within an installed package", () => {
  it("gives a relative import's URL and format where the extension or an explicit type decides", () => {
    const resolve = (specifier: string) => resolveWithinPackage(specifier, ESM, toNode);
    expect(resolve("./lib/a.js")).toEqual({ url: new URL("./lib/a.js", esmPkg).href, format: "module", shortCircuit: true });
    expect(resolve("./lib/b.cjs").format).toBe("commonjs");
    expect(resolve("./lib/c.mjs").format).toBe("module");
    expect(resolve("./lib/nested/e.js").format).toBe("commonjs");
    expect(resolve("./lib/link.js").url).toBe(new URL("./lib/d.js", esmPkg).href);
  });

  it("leaves to Node what it is not sure of", () => {
    const left: string[] = [];
    const node = (specifier: string) => {
      left.push(specifier);
      return { url: "node:resolved" };
    };
    const plain = pathToFileURL(path.join(root, "node_modules/plain-pkg/index.js")).href;
    const own = pathToFileURL(path.join(root, "own/app.js")).href;
    resolveWithinPackage("esm-pkg", ESM, node); // a bare specifier: "exports" is Node's
    resolveWithinPackage("./lib/not-there.js", ESM, node); // missing: Node's error
    resolveWithinPackage("./lib", ESM, node); // a folder: Node's error
    resolveWithinPackage("./other.js", { conditions: ["node", "import"], parentURL: plain }, node); // no "type": Node may detect
    resolveWithinPackage("./helper.js", { conditions: ["node", "import"], parentURL: own }, node); // not under node_modules
    resolveWithinPackage("./lib/a.js", { conditions: ["node", "require"], parentURL: esmPkg }, node); // require()
    resolveWithinPackage("./lib/a.js?x=1", ESM, node);
    resolveWithinPackage("./package.json", { ...ESM, importAttributes: { type: "json" } }, node);
    expect(left).toEqual(["esm-pkg", "./lib/not-there.js", "./lib", "./other.js", "./helper.js", "./lib/a.js", "./lib/a.js?x=1", "./package.json"]);
  });

  // On every Node at hand that has module.registerHooks (this one, and Node 24 in CI): the same modules at the same
  // URLs, and the same errors, with the hooks and without.
  const nodes = [...new Set([process.execPath, process.env.JFAST_TEST_NODE24].filter((n): n is string => Boolean(n)))];
  it.each(nodes)("loads the same modules and fails the same way on %s", (node) => {
    const hooks = pathToFileURL(path.resolve(import.meta.dirname, "../dist/fast-imports.js")).href;
    const script = `
      globalThis.loaded = [];
      const out = { installed: false, results: {} };
      if (process.env.WITH_HOOKS) out.installed = (await import(${JSON.stringify(hooks)})).installFastImports();
      for (const spec of ["esm-pkg", "esm-pkg/missing.js", "esm-pkg/folder.js", "plain-pkg", "./own/app.js"]) {
        try { await import(spec); out.results[spec] = "ok"; } catch (error) { out.results[spec] = error.code ?? error.message; }
      }
      out.loaded = globalThis.loaded;
      console.log(JSON.stringify(out));`;
    writeFileSync(path.join(root, "main.mjs"), script);
    const run = (withHooks: boolean) =>
      JSON.parse(execFileSync(node, [path.join(root, "main.mjs")], { cwd: root, env: { ...process.env, WITH_HOOKS: withHooks ? "1" : "" }, encoding: "utf8" })) as {
        installed: boolean;
        results: Record<string, string>;
        loaded: string[];
      };
    const without = run(false);
    const withHooks = run(true);
    const version = execFileSync(node, ["-p", "typeof require('node:module').registerHooks"], { encoding: "utf8" }).trim();
    // Node 20 has no registerHooks: nothing is installed there, and nothing changes.
    expect(withHooks.installed).toBe(version === "function");
    expect(withHooks.results).toEqual(without.results);
    expect(withHooks.loaded).toEqual(without.loaded);
    expect(without.results).toMatchObject({ "esm-pkg": "ok", "esm-pkg/missing.js": "ERR_MODULE_NOT_FOUND", "esm-pkg/folder.js": "ERR_UNSUPPORTED_DIR_IMPORT", "plain-pkg": "ok", "./own/app.js": "ok" });
    expect(without.loaded).toContain(new URL("./lib/d.js", esmPkg).href);
  });
});
