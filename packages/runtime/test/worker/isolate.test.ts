import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { AppWorker } from "../../src/worker/worker-group.js";
import { copyFixture, eventually, silentLogger } from "../postgres/pg-test-env.js";

/**
 * Tasks declared with `isolate` (docs/tasks.md#isolated-handlers), run by a real app's worker: their handlers run
 * in a worker thread or a child process, so CPU work does not hold up the worker's other jobs, a timed-out attempt
 * is ended by terminating its isolate, and an isolate that dies fails only its attempt.
 */
interface Line {
  what: string;
  pid: number;
  mainThread: boolean;
  threadId: number;
  at: number;
  attempt?: number;
}

describe("isolated handlers", () => {
  let fixture: { root: string; remove(): Promise<void> };
  let jfast: Jfast;
  let worker: AppWorker | null = null;
  let logDir: string;
  let log: string;

  beforeEach(async () => {
    fixture = await copyFixture("isolated-tasks");
    logDir = await mkdtemp(path.join(tmpdir(), "jfast-isolate-"));
    log = path.join(logDir, "runs.jsonl");
    jfast = await createJfast({ root: fixture.root, env: {}, logger: silentLogger });
    await jfast.start();
  });
  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    worker = null;
    await jfast.stop();
    await fixture.remove();
    await rm(logDir, { recursive: true, force: true });
  });

  async function lines(): Promise<Line[]> {
    const text = await readFile(log, "utf8").catch(() => "");
    return text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Line);
  }

  function startWorker(concurrency: number): AppWorker {
    worker = jfast.createWorker({ concurrency });
    worker.start();
    return worker;
  }

  async function stateOf(id: string): Promise<{ state: string; errors: Array<{ class: string; message: string }> } | null> {
    const info = await jfast.require("queue").backend.getJob({ id });
    return info ? { state: info.state, errors: info.job.errors.map((e) => ({ class: e.class, message: e.message })) } : null;
  }

  it("runs a thread-isolated handler off the main thread while the worker's other jobs go on", async () => {
    const queue = jfast.require("queue");
    startWorker(2);
    const heavy = new Job({ task: "media.render_thread", payload: { log, ms: 2500 } });
    await queue.enqueue(heavy);
    await eventually("the heavy job started", async () => (await lines()).some((l) => l.what === "render_thread:start"), 30_000);
    // Quick jobs enqueued while the isolate is busy on the CPU finish long before it does.
    await queue.enqueue(Array.from({ length: 5 }, () => new Job({ task: "media.quick", payload: { log } })));
    await eventually("the heavy job finished", async () => (await stateOf(heavy.id))?.state === "completed", 30_000);
    // What the isolated handler returned is its job's result, as in the main thread (docs/tasks.md#results).
    expect((await jfast.require("queue").backend.getJob({ id: heavy.id }))?.result).toEqual({ pages: 3 });
    const all = await lines();
    const start = all.find((l) => l.what === "render_thread:start")!;
    const end = all.find((l) => l.what === "render_thread:end")!;
    const quick = all.filter((l) => l.what === "quick");
    expect(start.mainThread).toBe(false);
    expect(start.pid).toBe(process.pid);
    expect(quick).toHaveLength(5);
    for (const q of quick) {
      expect(q.mainThread).toBe(true);
      expect(q.at).toBeLessThan(end.at);
    }
  }, 60_000);

  it("completes a thread-isolated job whose value holds a function, with the value's JSON form as its result", async () => {
    startWorker(1);
    const job = new Job({ task: "media.outline", payload: { log } });
    await jfast.require("queue").enqueue(job);
    await eventually("the job completed", async () => (await stateOf(job.id))?.state === "completed", 30_000);
    expect((await jfast.require("queue").backend.getJob({ id: job.id }))?.result).toEqual({ pages: 2 });
  }, 60_000);

  it("runs a process-isolated handler in a child process", async () => {
    startWorker(1);
    const job = new Job({ task: "media.render_process", payload: { log, ms: 50 } });
    await jfast.require("queue").enqueue(job);
    await eventually("the job completed", async () => (await stateOf(job.id))?.state === "completed", 30_000);
    const start = (await lines()).find((l) => l.what === "render_process:start")!;
    expect(start.pid).not.toBe(process.pid);
  }, 60_000);

  it("terminates the isolate of an attempt that runs past its timeout, and retries it in a fresh one", async () => {
    startWorker(1);
    const job = new Job({ task: "media.hang", payload: { log } });
    await jfast.require("queue").enqueue(job);
    await eventually("both attempts timed out", async () => (await stateOf(job.id))?.state === "dead", 30_000);
    const state = await stateOf(job.id);
    expect(state!.errors.map((e) => e.class)).toEqual(["JobTimeoutError", "JobTimeoutError"]);
    const starts = (await lines()).filter((l) => l.what === "hang:start");
    expect(starts.map((l) => l.attempt)).toEqual([1, 2]);
    // A fresh thread for the second attempt: the first one, spinning forever, was terminated.
    expect(starts[0]!.threadId).not.toBe(starts[1]!.threadId);
    // And the worker still runs jobs.
    const after = new Job({ task: "media.render_thread", payload: { log, ms: 0 } });
    await jfast.require("queue").enqueue(after);
    await eventually("a job after the hung ones completed", async () => (await stateOf(after.id))?.state === "completed", 30_000);
  }, 60_000);

  it("fails only the attempt whose child process dies, and keeps running other jobs", async () => {
    const queue = jfast.require("queue");
    startWorker(2);
    const crash = new Job({ task: "media.crash", payload: { log } });
    const other = new Job({ task: "media.render_process", payload: { log, ms: 0 } });
    await queue.enqueue([crash, other]);
    await eventually("the crashing job is dead", async () => (await stateOf(crash.id))?.state === "dead", 30_000);
    await eventually("the other job completed", async () => (await stateOf(other.id))?.state === "completed", 30_000);
    const state = await stateOf(crash.id);
    expect(state!.errors).toHaveLength(2);
    expect(state!.errors[0]).toMatchObject({ class: "IsolateCrashed", message: "the process running this attempt exited with code 3" });
  }, 60_000);

  it("keeps a PermanentError thrown in an isolate permanent, and says why providers are out of reach", async () => {
    const queue = jfast.require("queue");
    startWorker(2);
    const refuse = new Job({ task: "media.refuse", payload: {} });
    const needs = new Job({ task: "media.needs_provider", payload: { log } });
    await queue.enqueue([refuse, needs]);
    await eventually("both are dead", async () => (await stateOf(refuse.id))?.state === "dead" && (await stateOf(needs.id))?.state === "dead", 30_000);
    expect((await stateOf(refuse.id))!.errors).toEqual([{ class: "PermanentError", message: "this document can never be rendered" }]);
    expect((await stateOf(needs.id))!.errors[0]!.message).toMatch(/ctx\.require\("queue"\) is not available to an isolated handler/);
  }, 60_000);
});
