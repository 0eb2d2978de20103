import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import { defineTask } from "../../src/core/define-task.js";
import type { Job } from "../../src/core/job.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { createLogger } from "../../src/observability/logger.js";
import type { QueueProvider } from "../../src/queue/queue-provider.js";
import type { AppWorker as Worker } from "../../src/worker/worker-group.js";
import type { AdminBackendSetup } from "../admin/admin-harness.js";

export const VIEWER = "fuzz-viewer-token-0123456789abcdef";
export const OPERATOR = "fuzz-operator-token-0123456789abcdef";

/** The failure the throwing handler raises: its class is what the dead letter records. */
export class FuzzFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FuzzFailure";
  }
}

/**
 * How one suite gets its queue: jfast.toml sections (plugins enabled, [plugin.*]) and, where the test builds the
 * backend itself in its own namespace, that backend; the same shape as the admin suites'.
 */
export type FuzzBackendSetup = AdminBackendSetup;

/** Every run of a handler, by job id: the payload it got, and how many times it ran. */
export interface Runs {
  payloads: Map<string, unknown[]>;
  canaries: Set<string>;
}

export interface FuzzApp {
  jfast: Jfast;
  backend: QueueBackend;
  queue: QueueProvider;
  runs: Runs;
  /** The message the throwing handler raises for a job id (set before the job is enqueued). */
  messages: Map<string, string>;
  close(): Promise<void>;
}

/** Attempts a job gets ([plugin.queue] max_attempts). */
export const MAX_ATTEMPTS = 2;

/**
 * A service with three tasks — `fuzz.ok` returns, `fuzz.fail` throws the message the case chose, `fuzz.canary`
 * marks that the queue still runs — the admin tokens set, and a worker.
 */
export async function startFuzzApp(setup: () => Promise<FuzzBackendSetup>): Promise<FuzzApp> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-fuzz-"));
  const given = await setup();
  await writeFile(
    path.join(root, "jfast.toml"),
    // The fuzz cases read the error groups after each case: far more than a person's 10 scans per 10 s.
    `[service]\nname = "fuzz"\n\n[plugins]\nenabled = ${JSON.stringify(given.plugins)}\n\n[admin]\nscan_calls = 10000\n\n${given.sections}\n`,
  );
  const runs: Runs = { payloads: new Map(), canaries: new Set() };
  const messages = new Map<string, string>();
  const record = (job: Job, payload: unknown) => {
    const seen = runs.payloads.get(job.id) ?? [];
    seen.push(payload);
    runs.payloads.set(job.id, seen);
  };
  const ok = defineTask("fuzz.ok", async (payload: unknown, { job }) => {
    record(job, payload);
  });
  const fail = defineTask("fuzz.fail", async (payload: unknown, { job }) => {
    record(job, payload);
    throw new FuzzFailure(messages.get(job.id) ?? "no message was set for this job");
  });
  const canary = defineTask("fuzz.canary", async (_payload: unknown, { job }) => {
    runs.canaries.add(job.id);
  });
  let jfast: Jfast | null = null;
  let worker: Worker | null = null;
  try {
    jfast = await createJfast({
      root,
      ...(given.backend ? { backend: given.backend } : {}),
      tasks: [ok, fail, canary],
      env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},fuzzer:operator:${OPERATOR}` },
      logger: createLogger({ service: "fuzz", level: "silent" }),
    });
    await jfast.start();
    worker = jfast.createWorker({ concurrency: 4 });
    worker.start();
  } catch (error) {
    await jfast?.stop();
    await given.cleanup();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const started = jfast;
  const running = worker;
  return {
    jfast: started,
    backend: started.require<{ backend: QueueBackend }>("queue").backend,
    queue: started.require<QueueProvider>("queue"),
    runs,
    messages,
    async close() {
      await running.stop({ graceMs: 0 });
      await started.stop();
      await given.cleanup();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** [plugin.queue] settings that keep a case short: quick backoff and polling, two attempts. */
export const QUEUE_TUNING = `backoff_base = 0.01\npoll_interval = 0.05\nmax_attempts = ${MAX_ATTEMPTS}\n`;

export interface TrpcAnswer<T = any> {
  status: number;
  data: T;
  error: { message: string; data?: { code: string } } | null;
}

/** One admin procedure over HTTP, as the dashboard calls it (tRPC's wire format, no batching). */
export async function adminCall<T = any>(jfast: Jfast, procedure: string, options: { input?: unknown; mutation?: boolean } = {}): Promise<TrpcAnswer<T>> {
  const token = options.mutation ? OPERATOR : VIEWER;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let request: Request;
  if (options.mutation) {
    headers["content-type"] = "application/json";
    request = new Request(`http://service/jfast/admin/${procedure}`, { method: "POST", headers, body: JSON.stringify(options.input ?? null) });
  } else {
    const query = options.input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(options.input))}`;
    request = new Request(`http://service/jfast/admin/${procedure}${query}`, { headers });
  }
  const response = await jfast.fetch(request);
  const body = (await response.json()) as { result?: { data: T }; error?: TrpcAnswer["error"] };
  return { status: response.status, data: body.result?.data as T, error: body.error ?? null };
}
