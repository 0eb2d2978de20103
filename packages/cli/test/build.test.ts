import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listeningUrl, startDetached, type DetachedJfast } from "./detached-jfast.js";
import { createServiceRoot, runJfast } from "./jfast-process.js";

// `jfast build` of a TypeScript service (its tsconfig has noEmit, as a tsx project's does), then `jfast start
// --root dist`: the compiled folder has what the runtime reads, and its admin API shows the contracts the source
// tree shows, without a false orphan-subscription.

const TOKEN = "a-viewer-token-for-the-build-test";
const FILES = {
  "jfast.toml": `[service]\nname = "shop"\nbase_port = 1\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
  "contracts.toml": `[modules.receipt]\npublishes = ["receipt.registered"]\n\n[modules.alert]\n`,
  "tsconfig.json": JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: true, noEmit: true }, include: ["server.ts", "modules"] }),
  "server.ts": `import type { Jfast } from "@jfast/runtime";\nexport function createApp(_jfast: Jfast) {\n  return (request: Request) => new Response("hello from " + new URL(request.url).pathname);\n}\n`,
  "modules/receipt/register.ts": `import { Event } from "@jfast/runtime";\n\nexport function registered(id: string) {\n  return new Event({ type: "receipt.registered", data: { id } });\n}\n`,
  "modules/alert/tasks.ts": `import { readFileSync } from "node:fs";\nimport { subscribe } from "@jfast/runtime";\n\nconst QUERY = readFileSync(new URL("./budget.sql", import.meta.url), "utf8");\n\nexport const checkBudget = subscribe("receipt.registered", async () => {\n  void QUERY;\n});\n`,
  "modules/alert/budget.sql": "select 1;\n",
};

const running: DetachedJfast[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const p of running.splice(0)) p.killGroup();
  for (const remove of cleanups.splice(0)) await remove();
});

async function contractsOf(root: string): Promise<unknown> {
  const p = startDetached(["start", "--root", root], { cwd: root, env: { PORT: "0", HOST: "", JFAST_ENV: "development", JFAST_ADMIN_TOKENS: `ops:viewer:${TOKEN}` } });
  running.push(p);
  await p.waitFor('"msg":"http listening"');
  const base = listeningUrl(p.output());
  expect(await (await fetch(`${base}/anything`)).text()).toBe("hello from /anything");
  const answer = await fetch(`${base}/jfast/admin/contracts.graph`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(answer.status, p.output()).toBe(200);
  const graph = ((await answer.json()) as { result: { data: unknown } }).result.data;
  process.kill(p.pid, "SIGTERM");
  expect(await p.exited).toBe(0);
  return graph;
}

describe("jfast build", () => {
  it("compiles into dist/ with jfast.toml, contracts.toml, the assets and the contracts graph; jfast start --root dist shows the source tree's contracts", { timeout: 180_000 }, async () => {
    const service = await createServiceRoot(FILES);
    cleanups.push(service.remove);
    const built = await runJfast(["build", "--root", service.root]);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/^built .*dist in \d+ ms/);
    const dist = path.join(service.root, "dist");
    for (const file of ["jfast.toml", "contracts.toml", "contracts.graph.json", "package.json", "server.js", "modules/alert/tasks.js", "modules/alert/budget.sql", "modules/receipt/register.js"]) {
      expect(existsSync(path.join(dist, file)), file).toBe(true);
    }
    expect(JSON.parse(await readFile(path.join(dist, "package.json"), "utf8"))).toEqual({ private: true, type: "module" });

    const fromSources = (await contractsOf(service.root)) as { edges: Array<{ id: string }>; violations: unknown[] };
    const fromDist = (await contractsOf(dist)) as { source: string; edges: Array<{ id: string; violations: unknown[] }>; violations: unknown[] };
    expect(fromDist).toEqual(fromSources);
    expect(fromDist.source).toBe("contracts");
    expect(fromDist.edges.map((e) => e.id)).toContain("subscribes:event:receipt.registered->module:alert");
    expect(JSON.stringify(fromDist)).not.toContain("orphan-subscription");
  });

  it("says what is missing when the project has no TypeScript config", async () => {
    const { "tsconfig.json": _, ...rest } = FILES;
    const service = await createServiceRoot(rest);
    cleanups.push(service.remove);
    const built = await runJfast(["build", "--root", service.root]);
    expect(built.code).toBe(1);
    expect(built.stderr).toContain("no tsconfig.json in");
  });
});
