import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { currentJob } from "../../src/context/context.js";
import type { JobEventMap } from "../../src/core/job-events.js";
import { defineTask, task } from "../../src/core/define-task.js";
import type { JobMiddleware, TaskDefinition } from "../../src/core/task.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { PermanentError } from "../../src/errors/permanent-error.js";
import { dropSchema, eventually, PG_URL, silentLogger, uniqueSchema } from "../postgres/pg-test-env.js";

declare module "../../src/core/task.js" {
  interface JobLocals {
    middlewareTestUser: { id: string; tenant: string | null };
  }
}

/**
 * `createJfast({ middleware })` (docs/tasks.md#middleware): each middleware wraps the handler of every attempt, the
 * first outermost, sees the job, its tools and the handler's result, may hand the handler values through
 * `tools.locals`, replace the result, or stop the attempt by throwing.
 */
describe("job middleware", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function app(params: {
    tasks: TaskDefinition[];
    middleware: JobMiddleware[];
    postgres?: boolean;
  }): Promise<{ jfast: Jfast; ended: Array<{ name: string; event: JobEventMap["job:completed"] | JobEventMap["job:failed"] | JobEventMap["job:dead"] }> }> {
    const dir = await mkdtemp(path.join(tmpdir(), "jfast-middleware-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let toml = `[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n`;
    if (params.postgres) {
      const schema = uniqueSchema("middleware");
      cleanups.push(() => dropSchema(schema));
      toml = `[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 4\n[plugin.queue]\nbackend = "postgres"\n`;
    }
    await writeFile(path.join(dir, "jfast.toml"), `[service]\nname = "middleware"\n${toml}`);
    const jfast = await createJfast({ root: dir, env: {}, logger: silentLogger, tasks: params.tasks, middleware: params.middleware });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const ended: Array<{ name: string; event: JobEventMap["job:completed"] | JobEventMap["job:failed"] | JobEventMap["job:dead"] }> = [];
    jfast.on("job:completed", (event) => void ended.push({ name: "completed", event }));
    jfast.on("job:failed", (event) => void ended.push({ name: "failed", event }));
    jfast.on("job:dead", (event) => void ended.push({ name: "dead", event }));
    const worker = jfast.createWorker({ concurrency: 1 });
    worker.start();
    cleanups.push(() => worker.stop({ graceMs: 0 }));
    return { jfast, ended };
  }

  it("runs around the handler, the first outermost, and sees and may replace its result", async () => {
    const calls: string[] = [];
    const outer: JobMiddleware = async (job, _tools, next) => {
      calls.push(`outer before ${job.task}`);
      const result = await next();
      calls.push(`outer after ${JSON.stringify(result)}`);
      return { wrapped: result };
    };
    const inner: JobMiddleware = async (_job, _tools, next) => {
      calls.push("inner before");
      const result = await next();
      calls.push(`inner after ${JSON.stringify(result)}`);
      return result;
    };
    const work = defineTask("mw.work", async (payload: { n: number }) => {
      calls.push("handler");
      return payload.n + 1;
    });
    const { jfast, ended } = await app({ tasks: [work], middleware: [outer, inner] });
    await jfast.require("queue").enqueue(work.job({ n: 1 }));
    await eventually("the job completed", async () => ended.length === 1);
    expect(calls).toEqual(["outer before mw.work", "inner before", "handler", "inner after 2", "outer after 2"]);
    expect(ended[0]).toMatchObject({ name: "completed", event: { value: { wrapped: 2 } } });
  });

  it("reads the job and its context, and hands the handler values through tools.locals (inside a task's session too)", async () => {
    const authenticate: JobMiddleware = async (job, tools, next) => {
      // The job's context is already restored around the middleware, as around the handler.
      tools.locals.middlewareTestUser = { id: `user-of-${currentJob()?.id}`, tenant: job.tenantId };
      return next();
    };
    const seen: Array<{ user: unknown; session: boolean }> = [];
    const plain = defineTask("mw.plain", async (_payload: unknown, { locals, session }) => {
      seen.push({ user: locals.middlewareTestUser, session: session !== undefined });
    });
    const inSession = task("mw.session", { session: true }, async (_payload: unknown, { locals, session }) => {
      await session.execute("select 1");
      seen.push({ user: locals.middlewareTestUser, session: true });
    });
    const { jfast, ended } = await app({ tasks: [plain, inSession as TaskDefinition], middleware: [authenticate], postgres: true });
    const first = plain.job({}, { tenantId: "acme" });
    const second = inSession.job({}, { tenantId: "globex" });
    await jfast.require("queue").enqueue([first, second]);
    await eventually("both completed", async () => ended.length === 2);
    expect(seen).toHaveLength(2);
    expect(seen).toEqual(
      expect.arrayContaining([
        { user: { id: `user-of-${first.id}`, tenant: "acme" }, session: false },
        { user: { id: `user-of-${second.id}`, tenant: "globex" }, session: true },
      ]),
    );
  });

  it("stops the attempt by throwing instead of calling next(): the handler never runs, the attempt fails as if it had thrown", async () => {
    let handled = 0;
    const guard: JobMiddleware = async (job, _tools, next) => {
      if ((job.payload as { allowed: boolean }).allowed) return next();
      throw new PermanentError("not allowed");
    };
    const guarded = defineTask("mw.guarded", { maxAttempts: 3 }, async () => {
      handled++;
      return "ran";
    });
    const { jfast, ended } = await app({ tasks: [guarded], middleware: [guard] });
    const refused = guarded.job({ allowed: false });
    const allowed = guarded.job({ allowed: true });
    await jfast.require("queue").enqueue([refused, allowed]);
    await eventually("both ended", async () => ended.some((e) => e.name === "dead") && ended.some((e) => e.name === "completed"));
    expect(handled).toBe(1);
    expect(ended.filter((e) => e.event.job.id === refused.id).map((e) => e.name)).toEqual(["failed", "dead"]);
    expect(ended.find((e) => e.name === "dead")!.event).toMatchObject({ reason: "permanent", attemptError: { message: "not allowed" } });
    expect(ended.find((e) => e.name === "completed")!.event).toMatchObject({ value: "ran" });
  });

  it("sees the handler's error, and may turn it into a result", async () => {
    const rescue: JobMiddleware = async (_job, _tools, next) => {
      try {
        return await next();
      } catch (error) {
        return { rescued: (error as Error).message };
      }
    };
    const fails = defineTask("mw.fails", async () => {
      throw new Error("handler failed");
    });
    const { jfast, ended } = await app({ tasks: [fails], middleware: [rescue] });
    await jfast.require("queue").enqueue(fails.job({}));
    await eventually("the job ended", async () => ended.length === 1);
    expect(ended[0]).toMatchObject({ name: "completed", event: { value: { rescued: "handler failed" } } });
  });
});
