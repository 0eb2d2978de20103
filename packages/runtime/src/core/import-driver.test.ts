import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JfastError } from "../errors/jfast-error.js";
import { importDriver } from "./import-driver.js";

// Modules written outside any node_modules tree, so their imports really cannot be resolved.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "jfast-import-driver-"));
  await writeFile(path.join(dir, "needs-typescript.mjs"), 'import "typescript";\n');
  await writeFile(path.join(dir, "needs-other.mjs"), 'import "not-a-jfast-driver";\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const load = (file: string) => () => import(pathToFileURL(path.join(dir, file)).href);

describe("importDriver", () => {
  it("turns a missing driver into DRIVER_MISSING with the command that installs it", () => {
    // In a plain Node process: the test runner would resolve the bare import from the workspace instead.
    const script = `
      const { importDriver } = await import(${JSON.stringify(new URL("../../dist/core/import-driver.js", import.meta.url).href)});
      const error = await importDriver("typescript", () => import(${JSON.stringify(pathToFileURL(path.join(dir, "needs-typescript.mjs")).href)})).catch((e) => e);
      console.log(JSON.stringify({ name: error.name, code: error.code, hint: error.hint, message: error.message }));
    `;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toMatchObject({
      name: "JfastError",
      code: "DRIVER_MISSING",
      hint: "npm install --save-dev typescript",
      message: expect.stringContaining('the package "typescript" is not installed'),
    });
  });

  it("passes any other failure through as it is, including another missing package", async () => {
    const error = await importDriver("typescript", load("needs-other.mjs")).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(JfastError);
    expect((error as { code?: string }).code).toBe("ERR_MODULE_NOT_FOUND");
  });

  it("returns the module when the driver is there", async () => {
    const ioredis = await importDriver("ioredis", () => import("ioredis"));
    expect(typeof ioredis.Redis).toBe("function");
  });
});
