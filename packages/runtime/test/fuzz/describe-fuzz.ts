import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { JobState } from "../../src/core/job-state.js";
import type { JobInfo } from "../../src/core/queue-backend.js";
import { eventually } from "../conformance/harness.js";
import { fuzzCase, type FuzzInput } from "./arbitraries.js";
import { adminCall, MAX_ATTEMPTS, startFuzzApp, type FuzzApp, type FuzzBackendSetup } from "./fuzz-app.js";
import { FUZZ_SEED, fuzzRuns, replayHint, reportFigures, type FuzzFigures } from "./fuzz-settings.js";
import { asJsonGivesBack, payloadRefused, payloadTooLarge, recordedMessage, textRefused } from "./oracle.js";

export interface FuzzSuite {
  name: string;
  /** Cases this suite runs in CI (each case is one to five jobs); FUZZ_RUNS overrides it. */
  ciRuns: number;
  setup: () => Promise<FuzzBackendSetup>;
  /** PGlite reads text columns without a leading U+FEFF (docs/postgres.md#embedded-database). */
  dropsLeadingBom?: boolean;
  /** How accepted jobs reach the queue; queue.enqueue unless the suite says otherwise (the outbox relay). */
  enqueue?: (app: FuzzApp, jobs: Job[]) => Promise<void>;
}

/** A job the case made, with what the docs say should become of it. */
interface Expected {
  job: Job;
  input: FuzzInput;
  payload: unknown;
  /** The state it ends in: completed (its handler returned) or dead (it threw every time, or nobody knows its task). */
  end: typeof JobState.completed | typeof JobState.dead;
}

/**
 * One property per backend: whatever a case enqueues is refused at `new Job` exactly when the documented rules
 * refuse it (PAYLOAD_UNSUPPORTED), and otherwise ends in one documented state — completed, or dead with the
 * error its handler threw (recorded as documented) — with its payload as JSON gives it back, readable in the
 * admin views, retried and discarded through the admin API; and a canary enqueued afterwards still runs.
 */
export function describeFuzz(suite: FuzzSuite): void {
  const runs = fuzzRuns(suite.ciRuns);
  describe(`fuzz: ${suite.name}`, () => {
    let app: FuzzApp | null = null;
    const figures: FuzzFigures = { suite: suite.name, seed: FUZZ_SEED, cases: 0, inputs: 0, refused: 0, completed: 0, dead: 0, quarantined: 0, retried: 0, discarded: 0, lost: 0 };

    beforeAll(async () => {
      app = await startFuzzApp(suite.setup);
    }, 240_000);
    afterAll(async () => {
      await app?.close();
      reportFigures(figures);
    }, 60_000);

    it(`${runs} cases: refused as documented, or completed / dead, retried and discarded, and the queue goes on`, { timeout: Math.max(170_000, runs * 3_000) }, async () => {
      const property = fc.asyncProperty(fuzzCase, async (inputs) => {
        figures.cases++;
        await runCase(app!, suite, inputs, figures);
      });
      try {
        await fc.assert(property, { seed: FUZZ_SEED, numRuns: runs, endOnFailure: true });
      } catch (error) {
        throw new Error(`fuzz ${suite.name} failed (seed ${FUZZ_SEED}; ${replayHint()}):\n${(error as Error).message}`, { cause: error });
      }
    });
  });
}

async function runCase(app: FuzzApp, suite: FuzzSuite, inputs: FuzzInput[], figures: FuzzFigures): Promise<void> {
  const expected: Expected[] = [];
  for (const input of inputs) {
    figures.inputs++;
    const task = input.outcome.kind === "completes" ? "fuzz.ok" : input.outcome.kind === "throws" ? "fuzz.fail" : input.outcome.task;
    const refused = payloadRefused(input.payload) || textRefused(task) || textRefused(input.tenantId);
    let job: Job | null = null;
    let error: unknown = null;
    try {
      job = new Job({ task, payload: input.payload, tenantId: input.tenantId });
    } catch (caught) {
      error = caught;
    }
    if (refused) {
      expect((error as { code?: unknown } | null)?.code, "a value the documented rules refuse must be refused with PAYLOAD_UNSUPPORTED").toBe("PAYLOAD_UNSUPPORTED");
      figures.refused++;
      continue;
    }
    if (error) throw new Error(`a value the documented rules accept was refused: ${(error as Error).message}`);
    if (payloadTooLarge(input.payload)) {
      // Accepted by `new Job`, refused by enqueue before anything is stored.
      const tooLarge = await enqueue(app, suite, [job!]).then(
        () => null,
        (e: unknown) => e as { code?: unknown },
      );
      // A task the service does not declare is refused first, whatever the payload.
      const expectedCode = input.outcome.kind === "unknown" ? "TASK_UNKNOWN" : "PAYLOAD_TOO_LARGE";
      expect(tooLarge?.code, "a payload over max_payload_bytes must be refused at enqueue").toBe(expectedCode);
      expect(await readJob(app, job!.id)).toBeNull();
      figures.refused++;
      continue;
    }
    if (input.outcome.kind === "throws") app.messages.set(job!.id, input.outcome.message);
    expected.push({ job: job!, input, payload: asJsonGivesBack(input.payload), end: input.outcome.kind === "completes" ? JobState.completed : JobState.dead });
  }

  if (expected.length > 0) {
    const known = expected.filter((e) => e.input.outcome.kind !== "unknown").map((e) => e.job);
    const unknown = expected.filter((e) => e.input.outcome.kind === "unknown").map((e) => e.job);
    if (known.length > 0) await enqueue(app, suite, known);
    if (unknown.length > 0) {
      // This service refuses a task it does not declare (TASK_UNKNOWN), before anything is stored; another
      // service sharing the queue can still put one there, as the backend is given it here: it dies as unknown.
      const refusal = await enqueue(app, suite, unknown).then(
        () => null,
        (e: unknown) => e as { code?: unknown },
      );
      expect(refusal?.code, "enqueueing a task the service does not declare must be refused").toBe("TASK_UNKNOWN");
      for (const job of unknown) expect(await readJob(app, job.id)).toBeNull();
      await app.backend.enqueue({ jobs: unknown });
    }
    const dead = expected.filter((e) => e.end === JobState.dead);
    await settled(app, expected, dead.length, 1);
    for (const e of expected) await checkEnd(app, e, 1, suite);
    await checkAdminViews(app, expected);

    if (dead.length > 0) {
      // Retried through the admin API: each runs again from attempt 1, dies again, its history kept.
      const ids = dead.map((e) => e.job.id).sort();
      const retried = await adminCall(app.jfast, "deadLetters.retry", { input: { ids }, mutation: true });
      expect(retried.status, JSON.stringify(retried.error)).toBe(200);
      expect([...retried.data.retried].sort()).toEqual(ids);
      figures.retried += ids.length;
      await settled(app, expected, dead.length, 2);
      for (const e of dead) await checkEnd(app, e, 2, suite);

      // And discarded through it: gone from the queue and from every view.
      const discarded = await adminCall(app.jfast, "deadLetters.discard", { input: { ids }, mutation: true });
      expect(discarded.status, JSON.stringify(discarded.error)).toBe(200);
      expect([...discarded.data.discarded].sort()).toEqual(ids);
      figures.discarded += ids.length;
      expect((await app.backend.depths()).dead).toBe(0);
      const list = await adminCall(app.jfast, "deadLetters.list", { input: { limit: 200 } });
      expect(list.status).toBe(200);
      expect(list.data.items).toEqual([]);
    }
    figures.completed += expected.length - dead.length;
    figures.dead += dead.length;
  }

  // Nothing stopped being processed: a job enqueued after the case runs.
  const canary = new Job({ task: "fuzz.canary", payload: { after: inputs.length } });
  await app.queue.enqueue(canary);
  await eventually("the canary enqueued after the case to run", async () => app.runs.canaries.has(canary.id));
  app.runs.canaries.delete(canary.id);
  for (const e of expected) {
    app.runs.payloads.delete(e.job.id);
    app.messages.delete(e.job.id);
  }
}

function enqueue(app: FuzzApp, suite: FuzzSuite, jobs: Job[]): Promise<void> {
  return suite.enqueue ? suite.enqueue(app, jobs) : app.queue.enqueue(jobs).then(() => undefined);
}

/**
 * Waits until nothing of the case is ready, scheduled or running, `dead` jobs are dead letters, and every handler
 * ran as often as it should by the `round` (1, or 2 after a retry).
 */
async function settled(app: FuzzApp, expected: Expected[], dead: number, round: number): Promise<void> {
  await eventually(
    "every job of the case to end",
    async () => {
      for (const e of expected) {
        const ran = app.runs.payloads.get(e.job.id)?.length ?? 0;
        if (e.input.outcome.kind === "completes" && ran < 1) return false;
        if (e.input.outcome.kind === "throws" && ran < MAX_ATTEMPTS * round) return false;
      }
      const depths = await app.backend.depths();
      return depths.ready === 0 && depths.scheduled === 0 && depths.running === 0 && depths.dead === dead;
    },
    30_000,
  );
}

/** One job's end: the state, the payload its handler got and the one stored, the errors recorded. */
async function checkEnd(app: FuzzApp, e: Expected, round: number, suite: FuzzSuite): Promise<void> {
  const text = (value: string | null) => (suite.dropsLeadingBom && value?.startsWith("\ufeff") ? value.slice(1) : value);
  for (const seen of app.runs.payloads.get(e.job.id) ?? []) expect(seen).toEqual(e.payload);
  const info = await readJob(app, e.job.id);
  if (e.end === JobState.completed) {
    // A completed job is kept (state completed) or not kept at all, per backend and configuration.
    if (info !== null) expect(info.state).toBe(JobState.completed);
    return;
  }
  expect(info, `dead letter ${e.job.id}`).not.toBeNull();
  expect(info!.state).toBe(JobState.dead);
  expect(info!.job.payload).toEqual(e.payload);
  expect(info!.job.task).toBe(text(e.job.task));
  expect(info!.job.tenantId).toBe(text(e.job.tenantId));
  const last = info!.job.errors.at(-1);
  if (e.input.outcome.kind === "throws") {
    expect(info!.job.errors).toHaveLength(MAX_ATTEMPTS * round);
    expect(info!.job.attempts).toBe(MAX_ATTEMPTS);
    expect(last).toMatchObject({ class: "FuzzFailure", message: recordedMessage(e.input.outcome.message) });
  } else {
    expect(info!.job.errors).toHaveLength(round);
    expect(last?.reason).toBe("unknown task");
  }
}

async function readJob(app: FuzzApp, id: string): Promise<JobInfo | null> {
  try {
    return await app.backend.getJob({ id });
  } catch (error) {
    if ((error as { code?: unknown }).code === "NOT_SUPPORTED") return null;
    throw error;
  }
}

/** The dead letters list, its groups and each job's detail render, and show what the backend holds. */
async function checkAdminViews(app: FuzzApp, expected: Expected[]): Promise<void> {
  const deadIds = expected.filter((e) => e.end === JobState.dead).map((e) => e.job.id).sort();
  const list = await adminCall(app.jfast, "deadLetters.list", { input: { limit: 200 } });
  expect(list.status, JSON.stringify(list.error)).toBe(200);
  expect(list.data.items.map((d: { id: string }) => d.id).sort()).toEqual(deadIds);
  for (const item of list.data.items as Array<{ id: string; lastError: { message: string } | null; group: string }>) {
    const e = expected.find((x) => x.job.id === item.id)!;
    if (e.input.outcome.kind === "throws") expect(item.lastError?.message).toBe(recordedMessage(e.input.outcome.message));
    expect(typeof item.group).toBe("string");
  }
  const groups = await adminCall(app.jfast, "deadLetters.groups");
  expect(groups.status, JSON.stringify(groups.error)).toBe(200);
  expect(groups.data.groups.reduce((n: number, g: { count: number }) => n + g.count, 0)).toBe(deadIds.length);
  for (const e of expected) {
    const detail = await adminCall(app.jfast, "jobs.get", { input: { id: e.job.id } });
    if (e.end === JobState.completed && detail.status === 501) {
      // RabbitMQ looks up dead letters and running jobs only; a finished job is answered with that limit.
      expect(app.backend.kind).toBe("rabbitmq");
      expect(detail.error?.data?.code).toBe("NOT_IMPLEMENTED");
      continue;
    }
    expect(detail.status, JSON.stringify(detail.error)).toBe(200);
    if (e.end === JobState.dead) expect(detail.data.job).toMatchObject({ id: e.job.id, state: JobState.dead });
    else if (detail.data.job !== null) expect(detail.data.job).toMatchObject({ id: e.job.id, state: JobState.completed });
  }
}
