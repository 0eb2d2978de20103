// Compile-time checks of the published types (dist/*.d.ts through "@jfast/runtime"), run by `npm run typecheck`.
// Each @ts-expect-error pins an error a service relies on: if the error disappears, the typecheck fails.
import { z } from "zod";
import { createJfast, defineFlow, ErrorCode, JfastError, Job, ListOrder, ListState, task, type Database, type Jfast, type JobActionResult, type JobEventMap, type JobListing, type JobMiddleware, type QueueBackend, type QueueProvider, type RateLimit, type TaskSession } from "@jfast/runtime";

interface Mailer {
  send(message: { to: string; subject: string }): Promise<void>;
}

// A service declares its own providers once.
declare module "@jfast/runtime" {
  interface Providers {
    typesMailer: Mailer;
  }
  // What middleware hands handlers, declared the same way.
  interface JobLocals {
    typesUser: { id: string; admin: boolean };
  }
}

interface SendEmail {
  invoice_id: string;
}

export const sendEmail = task("types.send_email", async (payload: SendEmail, { ctx, job }) => {
  const id: string = payload.invoice_id;
  const same: string = job.payload.invoice_id;
  await ctx.require("typesMailer").send({ to: id, subject: same });
  // @ts-expect-error a provider nobody declared is a compile error, in a handler as in a route
  ctx.require("typesMailr");
});

export const withSession = task("types.with_session", { session: true }, async (_payload: SendEmail, { session }) => {
  const tx: TaskSession = session;
  await tx.execute("select 1");
  // @ts-expect-error the session is drizzle's transaction, not any
  tx.notAMethod();
});

export const withoutSession = task("types.without_session", async (_payload: SendEmail, { session }) => {
  // @ts-expect-error without session: true there is no session
  await session.execute("select 1");
});

export async function routes(jfast: Jfast): Promise<void> {
  const queue: QueueProvider = jfast.require("queue");
  // @ts-expect-error a misspelt provider name is a compile error
  jfast.require("queu");
  await jfast.require("typesMailer").send({ to: "a@b.c", subject: "hi" });
  // @ts-expect-error a declared provider has its own type, not any
  await jfast.require("typesMailer").deliver();

  const database = jfast.require("database");
  const db: Database = database.db;
  // @ts-expect-error the database is drizzle's PostgreSQL database, not any
  db.notAMethod();
  await database.transaction(async (tx) => {
    const session: TaskSession = tx;
    // @ts-expect-error the transaction is drizzle's, not any
    tx.notAMethod();
    await jfast.require("outbox").enqueue(session, sendEmail.job({ invoice_id: "inv_1" }, { tenantId: "acme" }));
  });

  // A task makes its own jobs, their payload checked against the handler's.
  const job: Job<SendEmail> = sendEmail.job({ invoice_id: "inv_1" }, { delayMs: 1000 });
  await queue.enqueue(job);
  // @ts-expect-error a wrong field in the payload
  sendEmail.job({ invoice: "inv_1" });
  // @ts-expect-error a field of the wrong type
  sendEmail.job({ invoice_id: 1 });
  // @ts-expect-error the task and payload come from the task, not the options
  sendEmail.job({ invoice_id: "inv_1" }, { task: "types.other" });

  // Priorities: 0 (first) to 9, on a job, through a task's job(...), and as a task's default.
  await queue.enqueue([sendEmail.job({ invoice_id: "inv_1" }, { priority: 0 }), new Job({ task: "types.send_email", priority: 9 })]);
  const urgent = task("types.urgent", { priority: 1 }, async () => undefined);
  const level: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 = urgent.job(undefined).priority;
  void level;
  // @ts-expect-error a priority is a whole number from 0 to 9
  sendEmail.job({ invoice_id: "inv_1" }, { priority: 10 });
  // @ts-expect-error not a name: lower numbers run first
  new Job({ task: "types.send_email", priority: "high" });
  // @ts-expect-error a task's default priority is 0 to 9 as well
  task("types.too_low", { priority: -1 }, async () => undefined);

  // Encryption at rest is a yes or no per task; the handler's payload keeps its type.
  const card = task<{ pan: string }>("types.charge_card", { encrypt: true }, async (payload) => payload.pan.length);
  await queue.enqueue(card.job({ pan: "4242" }));
  // @ts-expect-error encrypt is a boolean, not a key id
  task("types.encrypt_kid", { encrypt: "k1" }, async () => undefined);

  // A CPU-heavy handler runs in a worker thread or a child process, without a session.
  task<{ pages: number }>("types.render_pdf", { isolate: "thread", timeoutMs: 60_000 }, (payload) => payload.pages * 2);
  task("types.render_video", { isolate: "process" }, async () => undefined);
  // @ts-expect-error isolate is "thread" or "process"
  task("types.render_gpu", { isolate: "gpu" }, async () => undefined);
  // @ts-expect-error an isolated handler has no session: the transaction lives in the main thread
  task("types.render_in_tx", { isolate: "thread", session: true }, async (_payload, { session }) => session);

  // Deadlines on a job or as a task's default; debounce keyed from the task's own payload (docs/flow-control.md).
  await queue.enqueue(sendEmail.job({ invoice_id: "inv_1" }, { deadline: new Date(Date.now() + 60_000) }));
  await queue.enqueue(new Job({ task: "types.send_email", expiresInMs: 30_000 }));
  task<{ docId: string }>("types.reindex", { expiresInMs: 60_000, debounce: { key: (p) => p.docId, delayMs: 500, maxWaitMs: 5000 } }, async () => undefined);
  // @ts-expect-error a debounce key is read from the payload's own fields
  task<{ docId: string }>("types.reindex_bad", { debounce: { key: (p) => p.doc, delayMs: 500 } }, async () => undefined);
  // @ts-expect-error a deadline is a Date or an ISO 8601 string
  new Job({ task: "types.send_email", deadline: 5 });
  const expired: ListState = ListState.expired;
  void expired;

  // Untyped jobs stay possible.
  await queue.enqueue(new Job({ task: "types.send_email", payload: { anything: [1, 2] } }));
}

export async function assemble(root: string, mailer: Mailer): Promise<Jfast> {
  // @ts-expect-error a declared provider given with the wrong type
  await createJfast({ root, providers: { typesMailer: { send: 42 } } });
  return createJfast({ root, providers: { typesMailer: mailer } });
}

/** Listing jobs by state through the backend (docs/admin-api.md#listing-jobs): states and orders are closed sets. */
export async function listing(backend: QueueBackend): Promise<JobListing> {
  const page: JobListing = await backend.listJobs({ state: ListState.scheduled, order: ListOrder.oldest, task: "types.send_email", limit: 50 });
  const done: JobActionResult = await backend.runNow({ id: page.rows[0]!.job.id });
  void done.state;
  // Editing a waiting job: the run time is a Date, the priority a number; the task names how it is sealed.
  const edited: JobActionResult = await backend.updateJob({ id: page.rows[0]!.job.id, task: "types.send_email", payload: { to: "a@example.com" }, priority: 1, availableAt: new Date() });
  void edited.done;
  // @ts-expect-error the run time is a Date, not a string
  await backend.updateJob({ id: "j", task: "types.send_email", availableAt: "2026-12-24T08:00:00Z" });
  // @ts-expect-error "waiting" is not a listing state (ready or scheduled)
  await backend.listJobs({ state: "waiting", order: "newest", limit: 10 });
  // @ts-expect-error the order is newest or oldest
  await backend.listJobs({ state: "ready", order: "asc", limit: 10 });
  return backend.listJobs({ state: "dead", order: "newest", limit: 10, after: page.next ?? undefined });
}

// Unique jobs: the key function takes the task's payload; a job's own key is a string; the enqueue tells duplicates.
export const rebuildReport = task(
  "types.rebuild_report",
  { unique: { key: (payload) => payload.report, states: ["ready", "running", "completed"] } },
  async (payload: { report: string }) => {
    void payload.report;
  },
);

export const uniqueByTenant = task(
  "types.unique_by_tenant",
  {
    unique: {
      // @ts-expect-error the key function takes the task's payload, which has no such field
      key: (payload) => payload.report_id,
    },
  },
  async (_payload: { invoice_id: string }) => undefined,
);

export const uniqueWrongState = task(
  "types.unique_wrong_state",
  {
    unique: {
      // @ts-expect-error states are job states (a flow step's "waiting" is not one a key is held in)
      states: ["ready", "running", "waiting"],
    },
  },
  async (_payload: SendEmail) => undefined,
);

export async function enqueueUnique(queue: QueueProvider): Promise<string> {
  const result = await queue.enqueue(rebuildReport.job({ report: "q3" }, { unique: { key: "q3", periodMs: 60_000 } }));
  const first: { id: string; duplicate: boolean } | undefined = result.jobs[0];
  // @ts-expect-error a job's key is a string, not a function
  rebuildReport.job({ report: "q3" }, { unique: { key: (p: { report: string }) => p.report } });
  return first?.duplicate ? first.id : "";
}

// Task limits (docs/tasks.md#limits): a concurrency number and a rate of { max, perMs }.
export const chargeCard = task("types.charge_card", { concurrency: 5, rateLimit: { max: 10, perMs: 1000 } }, async (_payload: SendEmail) => undefined);

// @ts-expect-error concurrency is a number
export const concurrencyText = task("types.concurrency_text", { concurrency: "5" }, async () => undefined);

// @ts-expect-error a rate limit names its window: { max, perMs }
export const rateWithoutWindow = task("types.rate_without_window", { rateLimit: { max: 10 } }, async () => undefined);

export const rateTyped: RateLimit = { max: 10, perMs: 1000 };

// Flow control per key (docs/flow-control.md): each key function takes the task's payload type.
export const syncOrders = task(
  "types.sync_orders",
  { concurrency: { key: (p: { customerId: string }) => p.customerId, limit: 2 }, rateLimit: { max: 10, perMs: 1000 } },
  async (_payload: { customerId: string }) => undefined,
);
export const pushStock = task("types.push_stock", { rateLimit: { key: (p) => p.shopId, max: 10, perMs: 1000 } }, async (_payload: { shopId: string }) => undefined);
export const applyEntry = task("types.apply_entry", { orderedBy: (p) => p.accountId, onDead: "skip" }, async (_payload: { accountId: string }) => undefined);
export const importRow = task("types.import_row", { fairness: "tenant" }, async (_payload: { row: number }) => undefined);
export const exportPage = task("types.export_page", { fairness: { key: (p) => p.customerId, weights: { acme: 2 } } }, async (_payload: { customerId: string }) => undefined);

// @ts-expect-error a key function reads fields the payload has
export const wrongKeyField = task("types.wrong_key_field", { orderedBy: (p) => p.account }, async (_payload: { accountId: string }) => undefined);

// @ts-expect-error onDead is "block" or "skip"
export const wrongOnDead = task("types.wrong_on_dead", { orderedBy: (p) => p.accountId, onDead: "drop" }, async (_payload: { accountId: string }) => undefined);

// @ts-expect-error fairness is "tenant" or { key?, weights? }
export const wrongFairness = task("types.wrong_fairness", { fairness: "customer" }, async () => undefined);

// Error codes (docs/embedding.md#errors): one map, and the union derived from it types `JfastError.code`.
export function isBackendOutage(error: JfastError): boolean {
  const code: ErrorCode = error.code;
  return code === ErrorCode.BACKEND_UNAVAILABLE;
}

// @ts-expect-error a code that is not in ErrorCode does not compile
export const madeUpCode = new JfastError("made up", { code: "MADE_UP_CODE" });

// @ts-expect-error JfastError.code is the union, so comparing it with an unknown code is refused
export const comparesUnknownCode = (error: JfastError) => error.code === "BACKEND_DOWN";

// Job events (docs/observability.md#job-events): the name picks the payload; a name jfast does not emit does not compile.
export function listen(jfast: Jfast): () => void {
  const stop = jfast.on("job:completed", ({ job, value, durationMs, queue, workerId }) => {
    const id: string = job.id;
    const took: number = durationMs;
    void [id, took, value, queue, workerId];
  });
  jfast.on("job:failed", ({ error, attemptError, retryAt }) => {
    const next: Date | null = retryAt;
    const attempt: number = attemptError.attempt;
    void [error, next, attempt];
  });
  jfast.on("job:dead", ({ reason }) => {
    const why: "unknown task" | "permanent" | "exhausted" = reason;
    void why;
  });
  // @ts-expect-error there is no job:complete: the event is job:completed
  jfast.on("job:complete", () => undefined);
  // @ts-expect-error job:completed carries the value, not a retry time
  jfast.on("job:completed", ({ retryAt }) => void retryAt);
  // @ts-expect-error a listener typed for another event's payload
  jfast.on("job:claimed", (event: JobEventMap["job:failed"]) => void event.retryAt);
  jfast.on("job:dead", ({ reason }) => {
    // @ts-expect-error a dead letter's reason is one of three
    const timeout: "timeout" = reason;
    void timeout;
  });
  const listener = (event: JobEventMap["job:released"]) => void event.started;
  jfast.on("job:released", listener);
  jfast.off("job:released", listener);
  return stop;
}

// Middleware (docs/tasks.md#middleware): (job, tools, next) around every handler; locals typed by JobLocals.
export const authenticate: JobMiddleware = async (job, tools, next) => {
  tools.locals.typesUser = { id: job.tenantId ?? "anonymous", admin: false };
  // @ts-expect-error a local has the type JobLocals gives it
  tools.locals.typesUser = { id: 1, admin: false };
  // @ts-expect-error a local nobody declared
  tools.locals.typesUsr = { id: "u" };
  const result: unknown = await next();
  return result;
};

export const usesLocals = task("types.uses_locals", async (_payload: SendEmail, { locals }) => {
  const user: { id: string; admin: boolean } | undefined = locals.typesUser;
  // @ts-expect-error a local may be absent: no middleware set it
  const certain: { id: string; admin: boolean } = locals.typesUser;
  void [user, certain];
});

export async function withMiddleware(root: string): Promise<Jfast> {
  // @ts-expect-error middleware is (job, tools, next) returning a promise, not the handler's own shape
  await createJfast({ root, middleware: [(payload: SendEmail) => payload.invoice_id] });
  return createJfast({ root, middleware: [authenticate, async (_job, _tools, next) => next()] });
}

// Flows (docs/flows.md#typed-flows): a step runs after named steps of its flow, is started with its task's
// payload, and reads its parents' results with their tasks' result types.
interface OrderRef {
  order_id: number;
}
const flowCharge = task("types.charge_card", async (_payload: OrderRef) => ({ chargeId: "ch_1", cents: 1250 }));
const flowReserve = task("types.reserve_stock", async (_payload: OrderRef) => ({ reserved: true }));
// A step's handler that reads its own flow's results annotates its return type (the flow's type includes it).
const flowShip = task("types.create_shipment", async (_payload: OrderRef, tools): Promise<{ tracking: string }> => {
  const { charge, reserve } = fulfil.results(tools, "ship");
  const cents: number = charge.cents;
  const reserved: boolean = reserve.reserved;
  // @ts-expect-error a field the parent's result does not have
  void charge.refund;
  // @ts-expect-error "notify" is not a step that "ship" runs after
  void fulfil.results(tools, "ship").notify;
  // @ts-expect-error a step name the flow does not declare
  fulfil.results(tools, "shipping");
  return { tracking: `${cents}-${String(reserved)}` };
});
const flowReceipt = task("types.send_receipt", async (_payload: { email: string }) => undefined);
export const fulfil = defineFlow("types.order_fulfil", {
  charge: { task: flowCharge },
  reserve: { task: flowReserve },
  ship: { task: flowShip, after: ["charge", "reserve"] },
  notify: { task: flowReceipt, after: ["ship"], onParentFailure: "run" },
});
export async function startFulfil(queue: QueueProvider): Promise<string> {
  const input = fulfil.create({ charge: { order_id: 1 }, reserve: { order_id: 1 }, ship: { order_id: 1 }, notify: { email: "a@b.c" } });
  const { flowId, jobIds } = await queue.flow(input);
  const shipId: string | undefined = jobIds.ship;
  // @ts-expect-error every step needs its payload: notify's is missing
  fulfil.create({ charge: { order_id: 1 }, reserve: { order_id: 1 }, ship: { order_id: 1 } });
  // @ts-expect-error a payload of the wrong shape for its task
  fulfil.create({ charge: { order_id: "1" }, reserve: { order_id: 1 }, ship: { order_id: 1 }, notify: { email: "a@b.c" } });
  return `${flowId}:${shipId ?? ""}`;
}
export const notifyReads = task("types.notify_reads", async (_payload: object, tools) => {
  const { ship } = fulfil.results(tools, "notify");
  // A parent of a step that runs on failure is its result or { error }.
  const tracking: string = "error" in ship ? ship.error.message : ship.tracking;
  const flowId: string | undefined = tools.flow?.id;
  const batchTotal: number | undefined = tools.batch?.total;
  return { tracking, flowId, batchTotal };
});
// A job's life (docs/jobs.md): progress is a percentage or an object, log lines take a message and fields.
export const reportsProgress = task("types.reports_progress", async (_payload: object, tools) => {
  tools.progress(40);
  tools.progress({ done: 2, total: 5 });
  // @ts-expect-error progress is a number or an object, not text
  tools.progress("40%");
  const { progress, log } = tools;
  progress(100);
  log.info("imported", { rows: 5 });
  // @ts-expect-error a log line's fields are an object
  log.warn("skipped", "row 3");
});

// @ts-expect-error after names a step the flow does not have
defineFlow("types.bad_after", { a: { task: flowCharge }, b: { task: flowReserve, after: ["c"] } });

// Payload schemas (docs/tasks.md#payload-schemas): a Standard Schema types the payload — job() takes the
// schema's input, the handler gets its output.
const lineSchema = z.object({ order_id: z.number(), lines: z.array(z.string()).default([]) });
export const withSchema = task("types.with_schema", { schema: lineSchema }, async (payload) => {
  const lines: string[] = payload.lines;
  const id: number = payload.order_id;
  return { count: lines.length + id };
});
withSchema.job({ order_id: 1 });
// @ts-expect-error the schema's input: order_id is a number
withSchema.job({ order_id: "1" });
export const withSchemaSession = task("types.with_schema_session", { schema: lineSchema, session: true }, async (payload, { session }) => {
  const tx: TaskSession = session;
  return { tx: typeof tx, id: payload.order_id };
});
