import { afterAll, afterEach, describe, expect, it } from "vitest";
import { queueKeys } from "../../src/backends/redis/keys.js";
import { Job } from "../../src/core/job.js";
import { adminCall, QUEUE_TUNING, startFuzzApp, type FuzzApp } from "../fuzz/fuzz-app.js";
import { eventually } from "../conformance/harness.js";
import { reportFigures } from "../fuzz/fuzz-settings.js";
import { REDIS_URL, dropQueue, rawClient, uniqueQueue } from "./redis-test-env.js";

/**
 * Job hashes and ready-list entries of every wrong shape, as another producer, a hand edit or an older version
 * could leave them (the runtime never writes these). Each is run if it can be read as a job, or set aside as
 * a dead letter (jfast.corrupt_job) with the reason; the queue keeps running and the admin views show it.
 */
const VALID = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, task: "fuzz.ok", payload: {}, attempts: 0, maxAttempts: 2, availableAt: new Date().toISOString(), createdAt: new Date().toISOString(), tenantId: null, requestId: null, trace: null, errors: [], timeoutMs: null, ...extra });

interface Shape {
  name: string;
  /** The hash fields of job:<id>, or a non-hash value of that key; null: no key at all. */
  hash: Record<string, string> | { string: string } | { list: string[] } | null;
  end: "completed" | "corrupt";
}

const SHAPES: Array<(id: string) => Shape> = [
  (id) => ({ name: "json is not JSON", hash: { json: "{not json", state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json is an array", hash: { json: "[1,2]", state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json is a number", hash: { json: "42", state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json is null", hash: { json: "null", state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json without a task", hash: { json: JSON.stringify({ id, payload: {}, createdAt: new Date().toISOString() }), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json with an empty task", hash: { json: VALID(id, { task: "" }), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json whose task is a number", hash: { json: VALID(id, { task: 7 }), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json with another id", hash: { json: VALID(`${id}-other`), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "json without createdAt", hash: { json: VALID(id, { createdAt: undefined }), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "attempts not a number", hash: { json: VALID(id), state: "ready", attempts: "many" }, end: "corrupt" }),
  (id) => ({ name: "negative attempts", hash: { json: VALID(id), state: "ready", attempts: "-4" }, end: "completed" }),
  (id) => ({ name: "errors not JSON", hash: { json: VALID(id), state: "ready", errors: "[{broken" }, end: "completed" }),
  (id) => ({ name: "errors an object", hash: { json: VALID(id), state: "ready", errors: '{"a":1}' }, end: "completed" }),
  (id) => ({ name: "errors of numbers", hash: { json: VALID(id), state: "ready", errors: "[1,null,\"x\"]" }, end: "completed" }),
  (id) => ({ name: "available_at not a number", hash: { json: VALID(id), state: "ready", available_at: "soon" }, end: "completed" }),
  (id) => ({ name: "maxAttempts a string", hash: { json: VALID(id, { maxAttempts: "three" }), state: "ready" }, end: "completed" }),
  (id) => ({ name: "timeoutMs a string", hash: { json: VALID(id, { timeoutMs: "soon" }), state: "ready" }, end: "completed" }),
  (id) => ({ name: "trace a string", hash: { json: VALID(id, { trace: "00-x" }), state: "ready" }, end: "completed" }),
  (id) => ({ name: "tenantId a number", hash: { json: VALID(id, { tenantId: 5 }), state: "ready" }, end: "completed" }),
  (id) => ({ name: "payload missing", hash: { json: VALID(id, { payload: undefined }), state: "ready" }, end: "completed" }),
  (id) => ({ name: "errors in the JSON an object", hash: { json: VALID(id, { errors: { a: 1 } }), state: "ready" }, end: "corrupt" }),
  (id) => ({ name: "the job key is a string, not a hash", hash: { string: VALID(id) }, end: "corrupt" }),
  (id) => ({ name: "the job key is a list", hash: { list: ["a", "b"] }, end: "corrupt" }),
  (id) => ({ name: "an id with no job behind it", hash: null, end: "corrupt" }),
];

/** Ready-list entries that are not ids of stored jobs. */
const ENTRIES = ["", " ", "*", "a{b}c", "x".repeat(100_000), JSON.stringify({ task: "fuzz.ok" }), "ключ-🔑", "\u0000"];

describe("redis: garbage hashes and ready-list entries", () => {
  let app: FuzzApp | null = null;
  const raw = rawClient();
  afterEach(async () => {
    await app?.close();
    app = null;
  });
  afterAll(() => raw.disconnect());

  async function start(): Promise<{ fuzz: FuzzApp; keys: ReturnType<typeof queueKeys> }> {
    const queue = uniqueQueue("garbage-shapes");
    app = await startFuzzApp(async () => ({
      plugins: ["queue"],
      sections: `[plugin.queue]\nbackend = "redis"\nurl = "${REDIS_URL}"\nname = "${queue}"\n${QUEUE_TUNING}`,
      cleanup: () => dropQueue(queue),
    }));
    return { fuzz: app, keys: queueKeys({ queue }) };
  }

  it("each hash shape runs or is a dead letter with its reason; the queue keeps draining", { timeout: 60_000 }, async () => {
    const { fuzz, keys } = await start();
    const shapes = SHAPES.map((shape, i) => ({ id: `garbage-${i}`, ...shape(`garbage-${i}`) }));
    for (const shape of shapes) {
      const key = keys.job(shape.id);
      if (shape.hash === null) {
        // nothing stored
      } else if ("string" in shape.hash) await raw.set(key, shape.hash.string as string);
      else if ("list" in shape.hash) await raw.rpush(key, ...(shape.hash.list as string[]));
      else await raw.hset(key, shape.hash);
      await raw.lpush(keys.ready, shape.id);
    }
    const canary = new Job({ task: "fuzz.canary" });
    await fuzz.queue.enqueue(canary);
    await eventually("the canary enqueued after the garbage to run", async () => fuzz.runs.canaries.has(canary.id), 20_000);
    await eventually("the queue drained", async () => {
      const depths = await fuzz.backend.depths();
      return depths.ready === 0 && depths.running === 0 && depths.scheduled === 0;
    });
    // Every shape's end, so that a failure names all the shapes that went wrong at once.
    const ends = await Promise.all(
      shapes.map(async (shape) => {
        const info = await fuzz.backend.getJob({ id: shape.id }).catch((error: Error) => error);
        const detail = await adminCall(fuzz.jfast, "jobs.get", { input: { id: shape.id } });
        let end: string;
        if (info instanceof Error) end = `getJob failed: ${info.message}`;
        else if (fuzz.runs.payloads.has(shape.id)) end = "completed";
        else if (info?.state === "dead" && info.job.task === "jfast.corrupt_job" && info.job.errors.at(-1)?.reason === "corrupt job") end = "corrupt";
        else end = `neither run nor set aside (${info?.state ?? "no job"})`;
        if (detail.status !== 200) end += `; jobs.get answered ${detail.status}`;
        return `${shape.name}: ${end}`;
      }),
    );
    expect(ends).toEqual(shapes.map((shape) => `${shape.name}: ${shape.end}`));
    const corrupt = shapes.filter((shape) => shape.end === "corrupt").length;
    reportFigures({ kind: "garbage", suite: "redis job hashes", inputs: shapes.length, completed: shapes.length - corrupt, quarantined: corrupt, lost: 0 });
    const list = await adminCall(fuzz.jfast, "deadLetters.list", { input: { limit: 200 } });
    expect(list.status, JSON.stringify(list.error)).toBe(200);
    expect(list.data.items.length).toBe(shapes.filter((s) => s.end === "corrupt").length);
    expect((await adminCall(fuzz.jfast, "deadLetters.groups")).status).toBe(200);
    const discarded = await adminCall(fuzz.jfast, "deadLetters.discardMatching", { input: {}, mutation: true });
    expect(discarded.status, JSON.stringify(discarded.error)).toBe(200);
    expect((await fuzz.backend.depths()).dead).toBe(0);
  });

  it("ready-list entries that are no job's id are dead letters with the reason; the queue keeps draining", { timeout: 60_000 }, async () => {
    const { fuzz, keys } = await start();
    const before = new Job({ task: "fuzz.ok" });
    await fuzz.queue.enqueue(before);
    for (const entry of ENTRIES) await raw.lpush(keys.ready, entry);
    const after = new Job({ task: "fuzz.ok" });
    await fuzz.queue.enqueue(after);
    await eventually("both real jobs to run", async () => fuzz.runs.payloads.has(before.id) && fuzz.runs.payloads.has(after.id), 20_000);
    const dead = await eventually("every entry a dead letter", async () => {
      const list = await fuzz.backend.listDead({ limit: 50 });
      return list.length === ENTRIES.length ? list : null;
    });
    expect(dead.map((d) => d.job.id).sort()).toEqual([...ENTRIES].sort());
    reportFigures({ kind: "garbage", suite: "redis ready-list entries", inputs: ENTRIES.length, completed: 0, quarantined: ENTRIES.length, lost: 0 });
    for (const d of dead) expect(d.lastError).toMatchObject({ class: "CorruptJob", reason: "corrupt job" });
    const list = await adminCall(fuzz.jfast, "deadLetters.list", { input: { limit: 200 } });
    expect(list.status, JSON.stringify(list.error)).toBe(200);
    expect(list.data.items).toHaveLength(ENTRIES.length);
    const discarded = await adminCall(fuzz.jfast, "deadLetters.discardMatching", { input: {}, mutation: true });
    expect(discarded.data?.discarded, JSON.stringify(discarded.error)).toBe(ENTRIES.length);
    expect(await fuzz.backend.depths()).toEqual({ ready: 0, scheduled: 0, running: 0, dead: 0 });
  });

  // A job hash whose state field is missing or not a state: a claim that takes it for a second reference to a
  // job drops the list entry, and the job is neither run nor set aside.
  it("a job hash with no state, or a state that is not one, is run or set aside, never dropped", { timeout: 60_000 }, async () => {
    const { fuzz, keys } = await start();
    for (const [id, fields] of [["no-state", { json: VALID("no-state") }], ["odd-state", { json: VALID("odd-state"), state: "paused?" }]] as const) {
      await raw.hset(keys.job(id), fields);
      await raw.lpush(keys.ready, id);
    }
    const canary = new Job({ task: "fuzz.canary" });
    await fuzz.queue.enqueue(canary);
    await eventually("the canary to run", async () => fuzz.runs.canaries.has(canary.id), 20_000);
    for (const id of ["no-state", "odd-state"]) {
      const info = await eventually(`${id} to be run or set aside`, async () => {
        const got = await fuzz.backend.getJob({ id });
        return fuzz.runs.payloads.has(id) || got?.state === "dead" ? (got ?? { state: "completed" }) : null;
      }, 10_000);
      expect(["completed", "dead"], id).toContain(info.state);
    }
  });
});
