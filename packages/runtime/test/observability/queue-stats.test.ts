import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import { Job } from "../../src/core/job.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import { dropSchema, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";

const later = defineTask("stats.later", async () => undefined);

/** GET /queue/stats: open in development, 404 in production unless [plugin.queue] expose_stats = true. */
describe("GET /queue/stats", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(environment: string, queueToml: string, plugins = '"database", "queue"'): Promise<Jfast> {
    const schema = uniqueSchema("stats");
    cleanups.push(() => dropSchema(schema));
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-stats-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      path.join(dir, "jfast.toml"),
      `[service]\nname = "stats"\nenvironment = "${environment}"\n[plugins]\nenabled = [${plugins}]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n${plugins.includes('"queue"') ? `[plugin.queue]\nbackend = "postgres"\n${queueToml}` : ""}`,
    );
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: plugins.includes(`"queue"`) ? [later] : [] });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    return jfast;
  }

  async function stats(jfast: Jfast): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await jfast.fetch(new Request("http://service/queue/stats"));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it("answers in development with the queue's real depths and its tasks", async () => {
    const jfast = await app("development", "");
    await jfast.require<QueueProvider>("queue").enqueue([new Job({ task: "stats.later", delayMs: 60_000 }), new Job({ task: "stats.later" })]);
    const { status, body } = await stats(jfast);
    expect(status).toBe(200);
    expect(body).toMatchObject({ service: "stats", backend: "postgres", queue: "jfast.jobs", tasks: ["stats.later"] });
    expect(body.depths).toMatchObject({ ready: 1, scheduled: 1, delayed: 1, running: 0, dead: 0 });
  });

  it("is a 404 in production, and opens there with expose_stats = true", async () => {
    const closed = await app("production", "");
    const refused = await stats(closed);
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: "not found" });

    const exposed = await app("production", "expose_stats = true\n");
    const open = await stats(exposed);
    expect(open.status).toBe(200);
    expect(open.body.depths).toMatchObject({ ready: 0, dead: 0 });
  });

  it("says the queue is off when the service runs without it", async () => {
    const jfast = await app("development", "", '"database"');
    const { status, body } = await stats(jfast);
    expect(status).toBe(404);
    expect(String(body.error)).toMatch(/the queue plugin is not enabled/);
  });
});
