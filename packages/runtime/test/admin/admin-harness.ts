import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { QueueBackend } from "../../src/core/queue-backend.js";
import { defineTask } from "../../src/core/define-task.js";
import type { TaskDefinition } from "../../src/core/task.js";
import { Job } from "../../src/core/job.js";
import { createLogger } from "../../src/observability/logger.js";

export const VIEWER = "viewer-token-0001-0123456789abcdef";
export const OPERATOR = "operator-token-0001-0123456789abcdef";
/** A dashboard's token (`ops-dashboard:dashboard:…`): it acts for the person it names in x-jfast-actor. */
export const DASHBOARD = "dashboard-token-0001-0123456789abcdef";

/** A domain error the way services write them: its class name is what the dead-letter view shows. */
export class CardDeclined extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CardDeclined";
  }
}

export interface AdminApp {
  jfast: Jfast;
  backend: QueueBackend;
  /** Enqueues `count` charges that always fail and waits until all of them are dead letters. */
  killCharges(count: number, payload?: (i: number) => Record<string, unknown>): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * How a test gets its queue: a backend object handed to createJfast, or jfast.toml sections that make
 * createJfast build it (the database-backed path, where the audit trail lives in PostgreSQL).
 */
export interface AdminBackendSetup {
  /** Extra [plugins] enabled entries and [plugin.*] sections; the queue section must set backend. */
  plugins: string[];
  sections: string;
  backend?: QueueBackend;
  cleanup(): Promise<void>;
}

export const QUEUE_TUNING = `backoff_base = 0.01\npoll_interval = 0.05\nmax_attempts = 2\n`;

/** A service with a failing task, the admin tokens set, and a worker. */
export async function startAdminApp(params: {
  setup: () => Promise<AdminBackendSetup>;
  /** More tasks beside the failing ones (a test that needs jobs to succeed). */
  tasks?: TaskDefinition[];
  /** Reuse a service root (a restart of the same service); removed by close() only when created here. */
  root?: string;
}): Promise<AdminApp> {
  const root = params.root ?? (await mkdtemp(path.join(tmpdir(), "jfast-admin-")));
  const setup = await params.setup();
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "billing"\n\n[plugins]\nenabled = ${JSON.stringify(setup.plugins)}\n\n${setup.sections}\n[admin]\nredact = ["card_number"]\n`,
  );
  const cleanup = setup.cleanup;
  const charge = defineTask("billing.charge", async (payload: { invoice: string }, { job }) => {
    throw new CardDeclined(`card declined for invoice ${payload.invoice} (attempt ${job.attempts})`);
  });
  const other = defineTask("billing.send_receipt", async () => {
    throw new TypeError("mailer is not configured");
  });
  const subscriber = { ...defineTask("receipt.registered->alert.checkBudget", async () => {}), kind: "subscriber" as const, module: "alert" };
  const jfast = await createJfast({
    root,
    ...(setup.backend ? { backend: setup.backend } : {}),
    tasks: [charge, other, subscriber, ...(params.tasks ?? [])],
    env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},alice:operator:${OPERATOR},ops-dashboard:dashboard:${DASHBOARD}` },
    logger: createLogger({ service: "billing", level: "silent" }),
  });
  await jfast.start();
  const backend = jfast.require<{ backend: QueueBackend }>("queue").backend;
  const worker = jfast.createWorker({ concurrency: 4 });
  worker.start();
  return {
    jfast,
    backend,
    async killCharges(count, payload = (i) => ({ invoice: `inv-${i}` })) {
      const queue = jfast.require("queue");
      const jobs = Array.from({ length: count }, (_, i) => new Job({ task: "billing.charge", payload: payload(i) }));
      const before = (await backend.depths()).dead;
      await queue.enqueue(jobs);
      await eventually(`${count} dead letters`, async () => (await backend.depths()).dead >= before + count);
      return jobs.map((j) => j.id);
    },
    async close() {
      await worker.stop({ graceMs: 0 });
      await jfast.stop();
      await cleanup();
      if (!params.root) await rm(root, { recursive: true, force: true });
    },
  };
}

export interface TrpcAnswer<T = any> {
  status: number;
  data: T;
  error: { message: string; code: number; data: { code: string; httpStatus: number } } | null;
}

/** Calls one admin procedure over HTTP as the dashboard does (tRPC's wire format, no batching). */
export async function call<T = any>(
  jfast: Jfast,
  procedure: string,
  options: { token?: string | null; input?: unknown; mutation?: boolean; actor?: string } = {},
): Promise<TrpcAnswer<T>> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.actor) headers["x-jfast-actor"] = options.actor;
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

export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 15000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
