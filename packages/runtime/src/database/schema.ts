import { sql } from "drizzle-orm";
import { bigint, boolean, check, doublePrecision, index, integer, json, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/**
 * jfast's tables as drizzle sees them, for services that want to query them with drizzle (a report of
 * dead letters, a join against the inbox). The DDL itself lives in the numbered migrations next to this
 * file (migrations/*.sql), which are what runs; a test compares both so they cannot drift apart.
 * Tables are unqualified: they resolve through the search_path set to `[plugin.database] schema`.
 */

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const jfastJobs = pgTable(
  "jfast_jobs",
  {
    id: text("id").primaryKey(),
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    payload: json("payload").notNull(),
    state: text("state", { enum: ["waiting", "ready", "running", "completed", "dead", "cancelled", "expired"] }).notNull().default("ready"),
    attempts: integer("attempts").notNull().default(0),
    /** Times the job returned snooze(ms) (a snooze gives its attempt back, so attempts cannot count them). */
    snoozes: integer("snoozes").notNull().default(0),
    maxAttempts: integer("max_attempts"),
    availableAt: timestamptz("available_at").notNull().defaultNow(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
    tenantId: text("tenant_id"),
    requestId: text("request_id"),
    trace: jsonb("trace"),
    errors: jsonb("errors").notNull().default(sql`'[]'::jsonb`),
    timeoutMs: bigint("timeout_ms", { mode: "number" }),
    /** 0 runs first, 9 last (docs/tasks.md#priority). */
    priority: smallint("priority").notNull().default(5),
    /** A unique job's key, scoped by task and tenant, when held by state (docs/tasks.md#unique-jobs). */
    uniqueKey: text("unique_key"),
    /** The phases in which the job holds its key; null for a job that holds none in this table. */
    uniquePhases: text("unique_phases").array(),
    /** The job's unique option as given. */
    uniqueSpec: jsonb("unique_spec"),
    /** A completed job's result (docs/tasks.md#results); null when it returned nothing or it was not stored. */
    result: jsonb("result"),
    /** Why a completed job's result was not stored (too large, not JSON). */
    resultOmitted: text("result_omitted"),
    /** A flow's step: its place in the flow (core/flow.ts JobFlow), and its fan-in bookkeeping (docs/postgres.md#flows). */
    flow: jsonb("flow"),
    flowId: text("flow_id"),
    /** The job ids of the steps that run after this one. */
    flowChildren: text("flow_children").array(),
    /** Its parents not finished yet; 'waiting' until 0. */
    flowPending: integer("flow_pending"),
    /** Its death was counted for its onParentFailure = "run" children. */
    flowCounted: boolean("flow_counted").notNull().default(false),
    /** Each ended attempt's record: start, duration, worker, outcome, error, progress and log lines (docs/jobs.md, migration 0027). */
    runs: jsonb("runs"),
    /** The running job's last reported progress (docs/jobs.md#progress, migration 0027). */
    progress: jsonb("progress"),
    /** The job's key under its task's per-key limits, order or fairness (docs/flow-control.md, migration 0030). */
    limitKey: text("limit_key"),
    /**
     * A fair task's job: its turn among its task's keys, the claim taking the lowest first; 'Infinity' while it waits
     * to be placed (due later, or not yet claimed since it came due). docs/flow-control.md#fair-share-across-keys,
     * migration 0040.
     */
    fairTurn: doublePrecision("fair_turn"),
    /** When a job not started by then ends expired (docs/flow-control.md#deadlines, migration 0031). */
    expiresAt: timestamptz("expires_at"),
    lockedBy: text("locked_by"),
    lockedUntil: timestamptz("locked_until"),
    claimedAt: timestamptz("claimed_at"),
    finishedAt: timestamptz("finished_at"),
    diedAt: timestamptz("died_at"),
    /** 'open' for a ready or running job, else its state: what the indexes read, so a claim changes no indexed column. */
    phase: text("phase", { enum: ["open", "waiting", "completed", "dead", "cancelled", "expired"] })
      .notNull()
      .generatedAlwaysAs(sql`CASE WHEN state IN ('ready', 'running') THEN 'open' ELSE state END`),
  },
  (t) => [
    check("jfast_jobs_state_check", sql`${t.state} IN ('waiting', 'ready', 'running', 'completed', 'dead', 'cancelled')`),
    check("jfast_jobs_priority_check", sql`${t.priority} BETWEEN 0 AND 9`),
    index("jfast_jobs_open_idx").on(t.queue, t.availableAt, t.seq).where(sql`phase = 'open'`),
    index("jfast_jobs_claim_idx").on(t.queue, t.priority, t.availableAt, t.seq).where(sql`phase = 'open'`),
    index("jfast_jobs_dead_idx").on(t.queue, t.diedAt.desc(), t.seq.desc()).where(sql`phase = 'dead'`),
    index("jfast_jobs_finished_idx").on(t.queue, t.phase, t.finishedAt, t.seq).where(sql`phase IN ('completed', 'cancelled')`),
    uniqueIndex("jfast_jobs_unique_idx").on(t.queue, t.uniqueKey).where(sql`unique_phases IS NOT NULL AND phase = ANY (unique_phases)`),
    index("jfast_jobs_dead_payload_idx").using("gin", sql`(${t.payload}::jsonb) jsonb_path_ops`).where(sql`phase = 'dead'`),
    index("jfast_jobs_flow_idx").on(t.flowId).where(sql`flow_id IS NOT NULL`),
    index("jfast_jobs_waiting_idx").on(t.queue, t.availableAt, t.seq).where(sql`phase = 'waiting'`),
    index("jfast_jobs_limit_key_idx").on(t.queue, t.task, t.limitKey, t.priority, t.availableAt, t.seq).where(sql`phase = 'open' AND limit_key IS NOT NULL`),
    index("jfast_jobs_limit_key_order_idx").on(t.queue, t.task, t.limitKey, t.seq).where(sql`phase = 'open' AND limit_key IS NOT NULL`),
    index("jfast_jobs_limit_key_dead_idx").on(t.queue, t.task, t.limitKey).where(sql`phase = 'dead' AND limit_key IS NOT NULL`),
    index("jfast_jobs_fair_idx").on(t.queue, t.task, t.fairTurn, t.availableAt, t.seq).where(sql`phase = 'open' AND fair_turn IS NOT NULL`),
    index("jfast_jobs_expiring_idx").on(t.queue, t.expiresAt).where(sql`phase = 'open' AND expires_at IS NOT NULL`),
    index("jfast_jobs_expired_idx").on(t.queue, t.finishedAt).where(sql`phase = 'expired'`),
    index("jfast_jobs_request_idx").on(t.requestId, t.createdAt).where(sql`request_id IS NOT NULL`),
  ],
);

/** Flows and batches with their counters, kept by the queue's statements (migration 0024, docs/postgres.md#flows). */
export const jfastFlows = pgTable(
  "jfast_flows",
  {
    id: text("id").primaryKey(),
    queue: text("queue").notNull(),
    name: text("name"),
    kind: text("kind", { enum: ["flow", "batch"] }).notNull(),
    tenantId: text("tenant_id"),
    createdAt: timestamptz("created_at").notNull(),
    /** When its last step completed, or it was cancelled. */
    finishedAt: timestamptz("finished_at"),
    total: integer("total").notNull(),
    completed: integer("completed").notNull().default(0),
    dead: integer("dead").notNull().default(0),
    cancelled: boolean("cancelled").notNull().default(false),
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
  },
  (t) => [check("jfast_flows_kind_check", sql`${t.kind} IN ('flow', 'batch')`), index("jfast_flows_list_idx").on(t.queue, t.seq.desc())],
);

/** The steps of a broker queue's flows (RabbitMQ, docs/rabbitmq.md#flows): each one's job, kept until it is published. */
export const jfastFlowSteps = pgTable(
  "jfast_flow_steps",
  {
    jobId: text("job_id").primaryKey(),
    flowId: text("flow_id")
      .notNull()
      .references(() => jfastFlows.id, { onDelete: "cascade" }),
    queue: text("queue").notNull(),
    job: jsonb("job").notNull(),
    children: text("children").array().notNull(),
    pending: integer("pending").notNull(),
    counted: boolean("counted").notNull().default(false),
    state: text("state", { enum: ["waiting", "ready", "completed", "dead", "cancelled"] }).notNull(),
    published: boolean("published").notNull().default(false),
    publishAfter: timestamptz("publish_after"),
    result: jsonb("result"),
    resultOmitted: text("result_omitted"),
    finishedAt: timestamptz("finished_at"),
    /** Its last attempt's start and run time (migration 0035), for flows.get. */
    startedAt: timestamptz("started_at"),
    durationMs: doublePrecision("duration_ms"),
  },
  (t) => [
    check("jfast_flow_steps_state_check", sql`${t.state} IN ('waiting', 'ready', 'completed', 'dead', 'cancelled')`),
    index("jfast_flow_steps_flow_idx").on(t.flowId),
    index("jfast_flow_steps_unpublished_idx").on(t.queue, t.publishAfter).where(sql`state = 'ready' AND NOT published`),
  ],
);

export const jfastQueueCounters = pgTable("jfast_queue_counters", {
  queue: text("queue").primaryKey(),
  dead: bigint("dead", { mode: "number" }).notNull().default(0),
});

export const jfastTaskCounters = pgTable(
  "jfast_task_counters",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    dead: bigint("dead", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task] })],
);

export const jfastInbox = pgTable(
  "jfast_inbox",
  {
    consumer: text("consumer").notNull(),
    key: text("key").notNull(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.consumer, t.key] }), index("jfast_inbox_created_at_idx").on(t.createdAt)],
);

export const jfastOutbox = pgTable(
  "jfast_outbox",
  {
    id: text("id").primaryKey(),
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
    kind: text("kind", { enum: ["job", "event"] }).notNull(),
    destination: text("destination").notNull(),
    body: json("body").notNull(),
    headers: jsonb("headers").notNull().default(sql`'{}'::jsonb`),
    state: text("state", { enum: ["pending", "delivered", "dead"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(10),
    availableAt: timestamptz("available_at").notNull().defaultNow(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
    deliveredAt: timestamptz("delivered_at"),
    diedAt: timestamptz("died_at"),
    errors: jsonb("errors").notNull().default(sql`'[]'::jsonb`),
    claimedBy: text("claimed_by"),
    /** The row's tenant, '' for none: the relay serves tenants round robin (docs/flow-control.md, migration 0031). */
    tenant: text("tenant").notNull().default(""),
  },
  (t) => [
    index("jfast_outbox_tenant_idx").on(t.tenant, t.availableAt, t.seq).where(sql`state = 'pending'`),
    index("jfast_outbox_request_idx").on(sql`(${t.body}->>'requestId')`, t.createdAt).where(sql`(body->>'requestId') IS NOT NULL`),
    index("jfast_outbox_event_type_idx").on(sql`(${t.body}->>'type')`, t.createdAt).where(sql`kind = 'event' AND (body->>'requestId') IS NOT NULL`),
    index("jfast_outbox_pending_idx").on(t.availableAt, t.seq).where(sql`state = 'pending'`),
    index("jfast_outbox_dead_idx").on(t.diedAt.desc()).where(sql`state = 'dead'`),
    index("jfast_outbox_pending_seq_idx").on(t.seq).where(sql`state = 'pending'`),
    index("jfast_outbox_failing_idx").on(t.seq).where(sql`state = 'pending' AND errors <> '[]'::jsonb`),
    index("jfast_outbox_delivered_idx").on(t.deliveredAt).where(sql`state = 'delivered'`),
  ],
);

export const jfastSchedules = pgTable(
  "jfast_schedules",
  {
    name: text("name").notNull(),
    tick: timestamptz("tick").notNull(),
    claimedAt: timestamptz("claimed_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.name, t.tick] }), index("jfast_schedules_claimed_at_idx").on(t.claimedAt)],
);

export const jfastAdminAudit = pgTable(
  "jfast_admin_audit",
  {
    id: text("id").primaryKey(),
    at: timestamptz("at").notNull().defaultNow(),
    actor: text("actor").notNull(),
    role: text("role").notNull(),
    action: text("action").notNull(),
    ids: jsonb("ids").notNull(),
    count: integer("count").notNull(),
    filter: jsonb("filter"),
    outcome: jsonb("outcome").notNull(),
  },
  (t) => [index("jfast_admin_audit_at_idx").on(t.at.desc(), t.id.desc())],
);

/** Cancellations a RabbitMQ queue applies when the message is delivered (migration 0017). */
export const jfastCancelledJobs = pgTable(
  "jfast_cancelled_jobs",
  {
    queue: text("queue").notNull(),
    id: text("id").notNull(),
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
    cancelledAt: timestamptz("cancelled_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.queue, t.id] }), index("jfast_cancelled_jobs_seq_idx").on(t.queue, t.seq)],
);

export const jfastPausedTasks = pgTable(
  "jfast_paused_tasks",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    pausedAt: timestamptz("paused_at").notNull().defaultNow(),
    pausedBy: text("paused_by"),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task] })],
);

export const jfastStats = pgTable(
  "jfast_stats",
  {
    queue: text("queue").notNull(),
    at: timestamptz("at").notNull(),
    task: text("task").notNull(),
    processed: bigint("processed", { mode: "number" }).notNull().default(0),
    failed: bigint("failed", { mode: "number" }).notNull().default(0),
    dead: bigint("dead", { mode: "number" }).notNull().default(0),
    span: smallint("span").notNull().default(1),
    runMs: jsonb("run_ms").notNull().default(sql`'{}'::jsonb`),
    waitMs: jsonb("wait_ms").notNull().default(sql`'{}'::jsonb`),
  },
  (t) => [primaryKey({ columns: [t.queue, t.span, t.at, t.task] })],
);

export const jfastMigrations = pgTable("jfast_migrations", {
  version: integer("version").primaryKey(),
  name: text("name").notNull(),
  checksum: text("checksum").notNull(),
  appliedAt: timestamptz("applied_at").notNull().defaultNow(),
});

/** Every table jfast owns, by SQL name. */
/** Unique keys held outside jfast_jobs: for a period, and every key of a queue whose jobs live elsewhere (RabbitMQ). */
export const jfastUniqueKeys = pgTable(
  "jfast_unique_keys",
  {
    queue: text("queue").notNull(),
    key: text("key").notNull(),
    jobId: text("job_id").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    states: text("states").array(),
  },
  (t) => [primaryKey({ columns: [t.queue, t.key] }), index("jfast_unique_keys_job_idx").on(t.queue, t.jobId)],
);

/** Per-task limits of a queue, declared by its processes at start (migration 0020, docs/tasks.md#limits). */
export const jfastTaskLimits = pgTable(
  "jfast_task_limits",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    concurrency: integer("concurrency"),
    rateMax: integer("rate_max"),
    ratePerMs: bigint("rate_per_ms", { mode: "number" }),
    starts: timestamptz("starts").array().notNull().default(sql`'{}'`),
    perKey: boolean("per_key").notNull().default(false),
    fair: boolean("fair").notNull().default(false),
    weights: jsonb("weights"),
    keyRateMax: integer("key_rate_max"),
    keyRatePerMs: bigint("key_rate_per_ms", { mode: "number" }),
    ordered: boolean("ordered").notNull().default(false),
    onDead: text("on_dead", { enum: ["block", "skip"] }),
  },
  (t) => [
    primaryKey({ columns: [t.queue, t.task] }),
    check("jfast_task_limits_concurrency_check", sql`concurrency > 0`),
    check("jfast_task_limits_rate_max_check", sql`rate_max > 0`),
    check("jfast_task_limits_rate_per_ms_check", sql`rate_per_ms > 0`),
  ],
);

/** The jobs holding a slot of a task's concurrency limit (migration 0020). */
export const jfastTaskSlots = pgTable(
  "jfast_task_slots",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    jobId: text("job_id").notNull(),
    until: timestamptz("until"),
    limitKey: text("limit_key"),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task, t.jobId] }), index("jfast_task_slots_key_idx").on(t.queue, t.task, t.limitKey).where(sql`limit_key IS NOT NULL`)],
);

/** Each key's turns under a fair task's weighted round robin (docs/flow-control.md#fair-share-across-keys, migration 0030). */
export const jfastKeyTurns = pgTable(
  "jfast_key_turns",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    limitKey: text("limit_key").notNull(),
    served: doublePrecision("served").notNull(),
    servedAt: timestamptz("served_at"),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task, t.limitKey] })],
);

/**
 * The keys of a fair task with open jobs, each with the last turn its jobs were placed at (docs/flow-control.md#fair-share-across-keys,
 * migrations 0036 and 0040).
 */
export const jfastFairKeys = pgTable(
  "jfast_fair_keys",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    limitKey: text("limit_key").notNull(),
    turn: doublePrecision("turn").notNull(),
    servedAt: timestamptz("served_at").notNull().default(sql`'-infinity'`),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task, t.limitKey] }), index("jfast_fair_keys_last_idx").on(t.queue, t.task, t.turn)],
);

/** Each key's recent starts under a per-key rate limit (docs/flow-control.md#per-key-rate-limits, migration 0030). */
export const jfastKeyStarts = pgTable(
  "jfast_key_starts",
  {
    queue: text("queue").notNull(),
    task: text("task").notNull(),
    limitKey: text("limit_key").notNull(),
    starts: timestamptz("starts").array().notNull().default(sql`'{}'`),
  },
  (t) => [primaryKey({ columns: [t.queue, t.task, t.limitKey] })],
);

/** The worker registry: one row per worker process and named queue (docs/worker.md#the-worker-registry, migration 0028). */
export const jfastWorkers = pgTable(
  "jfast_workers",
  {
    queue: text("queue").notNull(),
    id: text("id").notNull(),
    host: text("host").notNull(),
    pid: integer("pid").notNull(),
    version: text("version").notNull(),
    namedQueue: text("named_queue").notNull(),
    concurrency: integer("concurrency").notNull(),
    startedAt: timestamptz("started_at").notNull(),
    heartbeatAt: timestamptz("heartbeat_at").notNull(),
    running: text("running").array().notNull().default(sql`'{}'`),
    heartbeatMs: integer("heartbeat_ms").notNull(),
    forgetAfterMs: bigint("forget_after_ms", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.queue, t.id] })],
);

/** Schedules made at run time, and the pause state of declared ones (docs/scheduler.md#at-run-time, migration 0032). */
export const jfastScheduleDefinitions = pgTable("jfast_schedule_definitions", {
  name: text("name").primaryKey(),
  spec: jsonb("spec"),
  paused: boolean("paused").notNull().default(false),
  since: timestamptz("since").notNull(),
  updatedAt: timestamptz("updated_at").notNull().defaultNow(),
  updatedBy: text("updated_by"),
});
/** Alert rules made at run time (docs/alerts.md#rules-at-run-time, migration 0034). */
export const jfastAlertRules = pgTable("jfast_alert_rules", {
  name: text("name").primaryKey(),
  spec: jsonb("spec").notNull(),
  updatedAt: timestamptz("updated_at").notNull().defaultNow(),
  updatedBy: text("updated_by"),
});
/** Where each alert rule stands: firing or resolved, since when (migration 0034). */
export const jfastAlertStates = pgTable("jfast_alert_states", {
  name: text("name").primaryKey(),
  state: text("state").notNull(),
  changedAt: timestamptz("changed_at").notNull(),
  value: doublePrecision("value"),
});
/** Every change of an alert's state and its webhook delivery (docs/alerts.md#delivery, migration 0034). */
export const jfastAlertHistory = pgTable(
  "jfast_alert_history",
  {
    // bigserial in the migration: the sequence is its default.
    id: bigint("id", { mode: "number" }).primaryKey(),
    alert: text("alert").notNull(),
    rule: text("rule").notNull(),
    state: text("state").notNull(),
    value: doublePrecision("value"),
    threshold: doublePrecision("threshold").notNull(),
    at: timestamptz("at").notNull(),
    webhook: text("webhook").notNull(),
    delivery: text("delivery").notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    deliveredAt: timestamptz("delivered_at"),
    /** What the notification named, and a promise's broken request, hop and service (docs/alerts.md#history, migration 0039). */
    detail: text("detail"),
    requestId: text("request_id"),
    hop: text("hop"),
    hopService: text("hop_service"),
  },
  (t) => [index("jfast_alert_history_alert").on(t.alert, t.id.desc())],
);
/** Leases of work one process at a time does, such as a queue's pruner (migration 0021). */
export const jfastLeases = pgTable("jfast_leases", {
  name: text("name").primaryKey(),
  owner: text("owner").notNull(),
  expiresAt: timestamptz("expires_at").notNull(),
});

export const jfastTables = {
  jfast_jobs: jfastJobs,
  jfast_queue_counters: jfastQueueCounters,
  jfast_task_counters: jfastTaskCounters,
  jfast_inbox: jfastInbox,
  jfast_outbox: jfastOutbox,
  jfast_schedules: jfastSchedules,
  jfast_admin_audit: jfastAdminAudit,
  jfast_paused_tasks: jfastPausedTasks,
  jfast_cancelled_jobs: jfastCancelledJobs,
  jfast_stats: jfastStats,
  jfast_unique_keys: jfastUniqueKeys,
  jfast_task_limits: jfastTaskLimits,
  jfast_task_slots: jfastTaskSlots,
  jfast_key_turns: jfastKeyTurns,
  jfast_fair_keys: jfastFairKeys,
  jfast_key_starts: jfastKeyStarts,
  jfast_workers: jfastWorkers,
  jfast_schedule_definitions: jfastScheduleDefinitions,
  jfast_leases: jfastLeases,
  jfast_alert_rules: jfastAlertRules,
  jfast_alert_states: jfastAlertStates,
  jfast_alert_history: jfastAlertHistory,
  jfast_flows: jfastFlows,
  jfast_flow_steps: jfastFlowSteps,
  jfast_migrations: jfastMigrations,
} as const;
