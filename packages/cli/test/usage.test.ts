import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { COMMANDS } from "../src/command-table.js";
import { createServiceRoot, REPO_ROOT, runJfast } from "./jfast-process.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serviceRoot(files: Record<string, string>): Promise<string> {
  const { root, remove } = await createServiceRoot(files);
  cleanups.push(remove);
  return root;
}

describe("help", () => {
  it("lists every registered command at the top level", async () => {
    const result = await runJfast(["--help"]);
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toContain(`  ${command.name}`);
  });

  // One process per command (with jobs list, run-now and delete, 28 of them): on a busy machine a minute is short.
  it("prints each command's usage, options and docs page, exit 0", { timeout: 240_000 }, async () => {
    for (const command of COMMANDS) {
      const result = await runJfast([...command.name.split(" "), "--help"]);
      expect(result.code, command.name).toBe(0);
      expect(result.stdout).toContain(`Usage: jfast ${command.name}`);
      expect(result.stdout).toMatch(/Docs: jfast docs [a-z-]+/);
      expect(result.stderr).toBe("");
    }
    const worker = await runJfast(["worker", "-h"]);
    expect(worker.stdout).toContain("--concurrency N");
    expect(worker.stdout).toContain("--grace SECONDS");
    expect(worker.stdout).toContain("(default: 25)");
  });

  it("works through npx from the repository root and from apps/example", () => {
    for (const cwd of [REPO_ROOT, path.join(REPO_ROOT, "apps/example")]) {
      const result = spawnSync("npx", ["jfast", "worker", "--help"], { cwd, encoding: "utf8" });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toContain("Usage: jfast worker");
    }
  });
});

describe("usage errors exit 2 and name the problem", () => {
  it("an unknown flag, with the close match and the help command", async () => {
    const result = await runJfast(["worker", "--concurency", "3"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown flag --concurency (did you mean --concurrency?)");
    expect(result.stderr).toContain('run "jfast worker --help"');
  });

  it("a value of the wrong type, or a missing one", async () => {
    const bad = await runJfast(["dev", "--concurrency", "many"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency expects a whole number, got "many"');
    const missing = await runJfast(["worker", "--grace"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--grace needs a value");
  });

  it("an unknown command, a group without its command, a stray argument", async () => {
    const unknown = await runJfast(["wroker"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "wroker" (did you mean "worker"?)');
    const group = await runJfast(["jobs"]);
    expect(group.code).toBe(2);
    expect(group.stderr).toContain("jobs retry");
    const stray = await runJfast(["worker", "extra"]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('unexpected argument "extra"');
  });

  it("jobs retry/discard without ids or --all, or with both", async () => {
    const neither = await runJfast(["jobs", "retry"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain("jfast jobs retry <id>... or --all");
    const both = await runJfast(["jobs", "retry", "abc", "--all"]);
    expect(both.code).toBe(2);
    const unconfirmed = await runJfast(["jobs", "discard", "--all"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("--yes");
  });
});

describe("runtime errors exit 1 with the fix and the docs page, without a stack", () => {
  it("no jfast.toml in the directory", async () => {
    const result = await runJfast(["worker"], { cwd: REPO_ROOT });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no jfast.toml in ${REPO_ROOT}`);
    expect(result.stderr).toContain("fix: run the command in a service directory");
    expect(result.stderr).toContain("see: jfast docs cli#the-service-root");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("a jfast.toml key the schema does not know; --verbose and JFAST_DEBUG=1 add the stack", async () => {
    const root = await serviceRoot({ "jfast.toml": `[service]\nname = "svc"\nbase_prot = 8000\n` });
    const result = await runJfast(["worker", "--root", root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[service]: unknown key base_prot");
    expect(result.stderr).toContain("see: jfast docs configuration");
    expect(result.stderr).not.toMatch(/^\s+at /m);
    const verbose = await runJfast(["worker", "--root", root, "--verbose"]);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toMatch(/^\s+at /m);
    const debug = await runJfast(["worker", "--root", root], { env: { JFAST_DEBUG: "1" } });
    expect(debug.stderr).toMatch(/^\s+at /m);
  });

  it("a tasks file that fails to import stops start-up", async () => {
    const root = await serviceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
      "modules/billing/tasks.ts": `import { task } from "@jfast/runtime";\nthrow new Error("boom at import");\n`,
    });
    const result = await runJfast(["worker", "--root", root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("modules/billing: modules/billing/tasks.ts failed to import: boom at import");
    expect(result.stderr).toContain("see: jfast docs tasks#discovery");
  });

  it("jobs commands refuse the memory backend, whose jobs live inside another process", async () => {
    const root = await serviceRoot({
      "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
    });
    const result = await runJfast(["jobs", "dead", "--root", root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the memory backend keeps its jobs inside the process that runs them");
  });
});
