import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, startJfast, type JfastProcess } from "./jfast-process.js";

// `jfast dev` on a memory-backed service whose server.ts exports a plain fetch handler: jfast's routes answer
// first, every other path reaches the app, and the app's enqueued job runs with the request's tenant.
const files = {
  "jfast.toml": `[service]\nname = "svc"\nbase_port = 1\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`,
  "modules/demo/tasks.ts": `
import { currentTenantId, task } from "@jfast/runtime";
export const seen: string[] = [];
export const hello = task("demo.hello", async () => { seen.push(String(currentTenantId())); });
`,
  "server.ts": `
import { Job, type Jfast } from "@jfast/runtime";
import { seen } from "./modules/demo/tasks.ts";
export function createApp(jfast: Jfast) {
  return async (request: Request) => {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === "/hello") {
      const tenantId = request.headers.get("x-tenant-id");
      const job = await jfast.withRequest({ tenantId }, async () => {
        const job = new Job({ task: "demo.hello" });
        await jfast.require<{ enqueue(job: Job): Promise<unknown> }>("queue").enqueue(job);
        return job;
      });
      return Response.json({ job_id: job.id }, { status: 202 });
    }
    if (url.pathname === "/seen") return Response.json(seen);
    return new Response("not here", { status: 404 });
  };
}
`,
};

let processes: JfastProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const p of processes) p.child.kill("SIGKILL");
  processes = [];
  for (const remove of cleanups.splice(0)) await remove();
});

async function dev(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ p: JfastProcess; base: string; listening: Record<string, unknown> }> {
  const service = await createServiceRoot(files);
  cleanups.push(service.remove);
  // PORT=0: the system picks a free port; the log line says which. HOST is cleared unless a test sets it.
  const p = startJfast(["dev", "--root", service.root, ...args], { env: { PORT: "0", HOST: "", JFAST_ENV: "development", ...env } });
  processes.push(p);
  await p.waitFor('"msg":"http listening"');
  const line = p.stderr.split("\n").find((l) => l.includes('"msg":"http listening"'))!;
  const listening = JSON.parse(line) as Record<string, unknown>;
  return { p, base: String(listening.url), listening };
}

/** Whether something accepts a TCP connection at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

describe("jfast dev", () => {
  it("serves jfast's routes and the service's app on PORT, with a worker that sees the request's tenant", async () => {
    const { p, base } = await dev([]);
    await p.waitFor('"msg":"worker started"');
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    const posted = await fetch(`${base}/hello`, { method: "POST", headers: { "x-tenant-id": "acme" } });
    expect(posted.status).toBe(202);
    let seen: string[] = [];
    for (let i = 0; i < 100 && seen.length === 0; i++) {
      seen = (await (await fetch(`${base}/seen`)).json()) as string[];
      if (seen.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toEqual(["acme"]);
    p.child.kill("SIGINT");
    expect((await p.exited).code).toBe(0);
  });

  it("--no-worker serves the API only: the job stays queued", async () => {
    const { p, base } = await dev(["--no-worker"]);
    expect((await fetch(`${base}/hello`, { method: "POST" })).status).toBe(202);
    const stats = (await (await fetch(`${base}/queue/stats`)).json()) as { depths: { ready: number } };
    expect(stats.depths.ready).toBe(1);
    expect(p.stderr).not.toContain("worker started");
    p.child.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
  });

  // On Linux all of 127.0.0.0/8 is this machine: a socket bound to 127.0.0.1 refuses 127.0.0.2, one bound to
  // every interface accepts it, which tells the two apart without another network interface.
  it("listens on 127.0.0.1 only in development and says so", async () => {
    const { p, base, listening } = await dev(["--no-worker"]);
    const port = Number(new URL(base).port);
    expect(listening).toMatchObject({ url: `http://127.0.0.1:${port}`, address: "127.0.0.1", interfaces: "this address only" });
    expect(await accepts("127.0.0.1", port)).toBe(true);
    expect(await accepts("127.0.0.2", port)).toBe(false);
    p.child.kill("SIGTERM");
    expect((await p.exited).code).toBe(0);
  });

  it("listens where --host or HOST says, and on every interface in production", async () => {
    const wide = await dev(["--no-worker", "--host", "0.0.0.0"]);
    const widePort = Number(new URL(wide.base).port);
    expect(wide.listening).toMatchObject({ address: "0.0.0.0", interfaces: expect.stringContaining("every interface") });
    expect(await accepts("127.0.0.2", widePort)).toBe(true);
    wide.p.child.kill("SIGTERM");
    await wide.p.exited;

    const fromEnv = await dev(["--no-worker"], { HOST: "127.0.0.2" });
    const envPort = Number(new URL(fromEnv.base).port);
    expect(fromEnv.listening).toMatchObject({ url: `http://127.0.0.2:${envPort}`, address: "127.0.0.2" });
    expect(await accepts("127.0.0.2", envPort)).toBe(true);
    expect(await accepts("127.0.0.1", envPort)).toBe(false);
    fromEnv.p.child.kill("SIGTERM");
    await fromEnv.p.exited;

    const production = await dev(["--no-worker"], { JFAST_ENV: "production" });
    const productionPort = Number(new URL(production.base).port);
    expect(production.listening.interfaces).toContain("every interface");
    expect(await accepts("127.0.0.2", productionPort)).toBe(true);
    production.p.child.kill("SIGTERM");
    expect((await production.p.exited).code).toBe(0);
  });
});

describe("jfast dev --watch", () => {
  it("starts the service again when one of its files changes, and stops with it on SIGTERM", async () => {
    const service = await createServiceRoot({
      ...files,
      "server.ts": `export function createApp() { return () => new Response("v1"); }\n`,
    });
    cleanups.push(service.remove);
    const p = startJfast(["dev", "--watch", "--no-worker", "--root", service.root], { env: { PORT: "0", HOST: "", JFAST_ENV: "development" } });
    processes.push(p);
    await p.waitFor('"msg":"http listening"');
    const first = /"url":"(http:\/\/[\d.]+:\d+)"/.exec(p.stderr)![1]!;
    expect(await (await fetch(first)).text()).toBe("v1");

    await writeFile(path.join(service.root, "server.ts"), `export function createApp() { return () => new Response("v2"); }\n`);
    await p.waitFor("server.ts changed: restarting");
    await p.waitFor(/"msg":"http listening"[\s\S]*"msg":"http listening"/);
    const urls = [...p.stderr.matchAll(/"url":"(http:\/\/[\d.]+:\d+)"/g)].map((m) => m[1]!);
    expect(await (await fetch(urls.at(-1)!)).text()).toBe("v2");
    // The first child stopped before the second started: its port no longer answers.
    if (urls[0] !== urls.at(-1)) await expect(fetch(urls[0]!)).rejects.toThrow();

    // A change outside the service's code (its embedded database, dependencies) restarts nothing.
    await mkdir(path.join(service.root, ".jfast"), { recursive: true });
    await writeFile(path.join(service.root, ".jfast", "noise.json"), "{}");
    await new Promise((r) => setTimeout(r, 500));
    expect(p.stderr.match(/changed: restarting/g)).toHaveLength(1);

    p.child.kill("SIGTERM");
    const exit = await p.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr.match(/"msg":"stopped"/g)).toHaveLength(2);
  });
});
