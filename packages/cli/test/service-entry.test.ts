import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast, startJfast, type JfastProcess } from "./jfast-process.js";

const TOML = `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`;
const TASKS = `import { task } from "@jfast/runtime";\nexport const ping = task("demo.ping", async () => {});\n`;

let cleanups: (() => Promise<void>)[] = [];
let processes: JfastProcess[] = [];
afterEach(async () => {
  for (const p of processes) p.child.kill("SIGKILL");
  processes = [];
  for (const c of cleanups.splice(0)) await c();
});

async function root(files: Record<string, string>): Promise<string> {
  const service = await createServiceRoot(files);
  cleanups.push(service.remove);
  return service.root;
}

describe("the service entry file (server.ts)", () => {
  it("may import its own tasks files: their tasks are still registered", async () => {
    const dir = await root({
      "jfast.toml": TOML,
      "modules/demo/tasks.ts": TASKS,
      "server.ts": `import { ping } from "./modules/demo/tasks.ts";\nexport const providers = { name: ping.name };\n`,
    });
    const p = startJfast(["worker", "--root", dir]);
    processes.push(p);
    await p.waitFor('"msg":"worker started"');
    expect(p.stderr).toContain('"tasks":["demo.ping"]');
    p.child.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
  });

  it("rejects exports of the wrong shape, naming the file and export", async () => {
    const dir = await root({ "jfast.toml": TOML, "server.ts": `export const createApp = 42;\n` });
    const result = await runJfast(["dev", "--root", dir], { env: { PORT: "0" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("server.ts exports createApp, but it is not a function");
    expect(result.stderr).toContain("see: jfast docs cli#the-service-entry-file");
  });

  it("rejects a createApp that returns something that is not an HTTP app", async () => {
    const dir = await root({ "jfast.toml": TOML, "app.ts": `export function createApp() { return { nope: true }; }\n` });
    const result = await runJfast(["dev", "--root", dir, "--no-worker"], { env: { PORT: "0" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("createApp() in app.ts returned object, not an HTTP app");
  });
});
