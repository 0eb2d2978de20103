import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, startJfast, type JfastProcess } from "./jfast-process.js";

// A memory-backed service whose server.ts enqueues jobs once the app has started, so that one `jfast worker`
// process can be observed end to end without any other service. Tasks print markers on stdout.
const files = {
  "jfast.toml": `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
  "modules/demo/tasks.ts": `
import { currentTenantId, task } from "@jfast/runtime";
export const quick = task("demo.quick", async (payload: { ms: number }, { ctx }) => {
  process.stdout.write("start demo.quick\\n");
  await new Promise((r) => setTimeout(r, payload.ms));
  process.stdout.write("done demo.quick tenant=" + currentTenantId() + " mailer=" + ctx.require("mailer") + "\\n");
});
export const stuck = task("demo.stuck", async () => {
  process.stdout.write("start demo.stuck\\n");
  // Ignores its abort signal on purpose: only the shutdown's release can end it.
  await new Promise((r) => setTimeout(r, 600_000));
});
`,
  "server.ts": `
import { Job, type Jfast } from "@jfast/runtime";
export const providers = { mailer: "dev-mailer" };
export async function onStart(jfast: Jfast) {
  const queue = jfast.require<{ enqueue(job: Job): Promise<unknown> }>("queue");
  await queue.enqueue(new Job({ task: "demo.quick", payload: { ms: 1500 }, tenantId: "acme" }));
  await queue.enqueue(new Job({ task: "demo.stuck" }));
}
`,
};

let processes: JfastProcess[] = [];
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  for (const p of processes) p.child.kill("SIGKILL");
  processes = [];
  await cleanup?.();
});

async function worker(args: string[]): Promise<JfastProcess> {
  const service = await createServiceRoot(files);
  cleanup = service.remove;
  const p = startJfast(["worker", "--root", service.root, ...args]);
  processes.push(p);
  await p.waitFor('"msg":"worker started"');
  await p.waitFor("start demo.stuck");
  await p.waitFor("start demo.quick");
  return p;
}

describe("jfast worker process: signals", () => {
  it("logs its tasks at start; SIGTERM lets the short job finish, releases the stuck one after the grace, exits 0", async () => {
    const p = await worker(["--grace", "4", "--concurrency", "2"]);
    expect(p.stderr).toContain('"tasks":["demo.quick","demo.stuck"]');
    const sent = Date.now();
    p.child.kill("SIGTERM");
    const result = await p.exited;
    const elapsed = Date.now() - sent;
    expect(result.code).toBe(0);
    // The quick job (1.5 s) finished within the grace, with its tenant and the service's provider.
    expect(result.stdout).toContain("done demo.quick tenant=acme mailer=dev-mailer");
    // The stuck job held the shutdown for the grace period, then was released, not abandoned.
    expect(elapsed).toBeGreaterThanOrEqual(3_500);
    expect(elapsed).toBeLessThan(15_000);
    expect(result.stderr).toContain("released running jobs at shutdown");
  });

  it("a second SIGTERM stops waiting at once", async () => {
    const p = await worker(["--grace", "120"]);
    p.child.kill("SIGTERM");
    await p.waitFor("SIGTERM: shutting down");
    const second = Date.now();
    p.child.kill("SIGTERM");
    const result = await p.exited;
    expect(result.code).toBe(0);
    // Far below the 120 s grace: the wait already in progress ended.
    expect(Date.now() - second).toBeLessThan(10_000);
    expect(result.stderr).toContain("SIGTERM again");
    expect(result.stderr).toContain("released running jobs at shutdown");
  });
});
