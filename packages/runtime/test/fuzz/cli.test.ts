import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeadJob } from "../../src/core/queue-backend.js";
import { Job } from "../../src/core/job.js";
import { eventually } from "../conformance/harness.js";
import { PG_URL, dropSchema, uniqueSchema } from "../postgres/pg-test-env.js";
import { errorMessage, text } from "./arbitraries.js";
import { QUEUE_TUNING, startFuzzApp, type FuzzApp } from "./fuzz-app.js";
import { FUZZ_SEED, fuzzRuns, replayHint, reportFigures, type FuzzFigures } from "./fuzz-settings.js";
import { asJsonGivesBack, payloadRefused, recordedMessage, textRefused } from "./oracle.js";

const REPO_ROOT = path.resolve(fileURLToPath(import.meta.url), "../../../../..");
const JFAST_BIN = path.join(REPO_ROOT, "packages/cli/bin/jfast.js");

/** `jfast <args>` as an operator runs it, against the service root. */
function jfast(root: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [JFAST_BIN, ...args, "--root", root], { cwd: root, env: { ...process.env, JFAST_DEBUG: "" }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  // Decoded as a stream: a character whose UTF-8 bytes straddle two chunks stays one character (decoding chunk
  // by chunk turned an astral character split across a pipe read into replacement characters).
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (stdout += chunk));
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** JSON an operator could type: JSON values, with NUL, lone surrogates and deep nesting written as escapes. */
const payloadText = fc
  .oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 3, arbitrary: fc.dictionary(text, fc.oneof(text, fc.double(), fc.constant(null)), { maxKeys: 4 }) },
    { weight: 1, arbitrary: fc.integer({ min: 250, max: 262 }).map((levels) => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`) as unknown) },
  )
  .map((value) => JSON.stringify(value));

/** A tenant as a command line carries it: no NUL (an argument cannot hold one), valid Unicode. */
const tenant = fc.oneof(fc.constant(null), text.filter((t) => t.length > 0 && !textRefused(t) && !t.startsWith("-")));

/**
 * The same property through the CLI, as an operator meets it: `jfast jobs enqueue` refuses what the rules refuse,
 * and a job that dies is listed by `jfast jobs dead --json`, retried by `jfast jobs retry` and removed by
 * `jfast jobs discard`, against a service on the PostgreSQL server whose worker runs in this process.
 */
describe("fuzz: the CLI (jobs enqueue, dead, retry, discard) on PostgreSQL", () => {
  // Each case starts four CLI processes: a twentieth of FUZZ_RUNS in long runs.
  const runs = fuzzRuns(4, 0.05);
  const schema = uniqueSchema("fuzzcli");
  let root = "";
  let app: FuzzApp | null = null;
  const figures: FuzzFigures = { suite: "cli (postgres)", seed: FUZZ_SEED, cases: 0, inputs: 0, refused: 0, completed: 0, dead: 0, quarantined: 0, retried: 0, discarded: 0, lost: 0 };

  beforeAll(async () => {
    const sections = `[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\npool_size = 2\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`;
    app = await startFuzzApp(async () => ({ plugins: ["database", "queue"], sections, cleanup: () => dropSchema(schema) }));
    // The service root the CLI reads: the same database and schema, and the task declared in its module.
    root = await mkdtemp(path.join(tmpdir(), "jfast-fuzz-cli-"));
    await symlink(path.join(REPO_ROOT, "node_modules"), path.join(root, "node_modules"), "dir");
    await writeFile(path.join(root, "package.json"), JSON.stringify({ name: "fuzz-service", private: true, type: "module" }));
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "fuzz"\n\n[plugins]\nenabled = ["database", "queue"]\n\n${sections}`);
    await mkdir(path.join(root, "modules/fuzz"), { recursive: true });
    await writeFile(
      path.join(root, "modules/fuzz/tasks.ts"),
      `import { task } from "@jfast/runtime";\nexport const fail = task("fuzz.fail", async () => {\n  throw new Error("this service's worker runs in the test process");\n});\n`,
    );
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    if (root) await rm(root, { recursive: true, force: true });
    reportFigures(figures);
  }, 60_000);

  it(`${runs} cases: refused by jobs enqueue as documented, or dead, listed, retried and discarded`, { timeout: Math.max(170_000, runs * 40_000) }, async () => {
    const property = fc.asyncProperty(payloadText, tenant, errorMessage, async (payload, tenantId, message) => {
      const fuzz = app!;
      figures.cases++;
      figures.inputs++;
      const id = randomUUID();
      fuzz.messages.set(id, message);
      const enqueued = await jfast(root, ["jobs", "enqueue", "fuzz.fail", "--payload", payload, "--id", id, "--max-attempts", "1", ...(tenantId ? ["--tenant", tenantId] : [])]);
      if (payloadRefused(JSON.parse(payload))) {
        expect(enqueued.code, enqueued.stdout).not.toBe(0);
        // The CLI prints a JfastError's message, hint and docs (the code stays with the API).
        expect(enqueued.stderr).toMatch(/^jfast: the payload of a "fuzz\.fail" job cannot be stored: /);
        expect(enqueued.stderr).toContain("jfast docs tasks#payloads");
        expect(await fuzz.backend.getJob({ id })).toBeNull();
        figures.refused++;
      } else {
        expect(enqueued.code, enqueued.stderr).toBe(0);
        expect(enqueued.stdout.trim()).toBe(id);
        await eventually("the job dead", async () => (await fuzz.backend.getJob({ id }))?.state === "dead");

        const listed = await jfast(root, ["jobs", "dead", "--json"]);
        expect(listed.code, listed.stderr).toBe(0);
        const dead = (JSON.parse(listed.stdout) as DeadJob[]).find((d) => d.job.id === id);
        expect(dead, "the dead letter in jobs dead --json").toBeDefined();
        expect(dead!.job.payload).toEqual(asJsonGivesBack(JSON.parse(payload)));
        expect(dead!.job.tenantId).toBe(tenantId);
        expect(dead!.lastError).toMatchObject({ class: "FuzzFailure", message: recordedMessage(message) });
        figures.dead++;

        const retried = await jfast(root, ["jobs", "retry", id]);
        expect(retried.code, retried.stderr).toBe(0);
        expect(retried.stdout).toContain(`retried ${id}`);
        await eventually("the retried job dead again", async () => {
          const info = await fuzz.backend.getJob({ id });
          return info?.state === "dead" && info.job.errors.length === 2;
        });
        figures.retried++;

        const discarded = await jfast(root, ["jobs", "discard", id]);
        expect(discarded.code, discarded.stderr).toBe(0);
        expect(discarded.stdout).toContain(`discarded ${id}`);
        expect(await fuzz.backend.getJob({ id })).toBeNull();
        figures.discarded++;
      }
      const canary = new Job({ task: "fuzz.canary" });
      await fuzz.queue.enqueue(canary);
      await eventually("the canary to run", async () => fuzz.runs.canaries.has(canary.id));
      fuzz.messages.delete(id);
      fuzz.runs.payloads.delete(id);
    });
    try {
      // Two cases every run has, whatever the seed: a refused payload, and a long error message with a NUL in it.
      const examples: Array<[string, string | null, string]> = [
        [String.raw`{"note":"a\u0000b"}`, null, "refused before this"],
        [String.raw`{"list":[1,"\ud83d\ude00",{"ключ":null}]}`, "ácme", `${"€".repeat(9000)}\u0000`],
      ];
      await fc.assert(property, { seed: FUZZ_SEED, numRuns: runs, endOnFailure: true, examples });
    } catch (error) {
      throw new Error(`fuzz cli failed (seed ${FUZZ_SEED}; ${replayHint()}):\n${(error as Error).message}`, { cause: error });
    }
  });
});
