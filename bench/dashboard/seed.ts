/**
 * Fills a jfast schema (already migrated by the service) with SQL alone, generate_series doing the work:
 * dead letters with varied tasks, tenants, errors and payloads carrying `customer.id`; completed and queued jobs;
 * an audit trail and a week of throughput. Ids are version-7 shaped UUIDs (time first), as the runtime makes them.
 */
import type pg from "pg";

export const QUEUE = "jfast.jobs";
export const TASKS = ["billing.charge", "billing.refund", "billing.invoice", "billing.email", "billing.sync", "billing.webhook"];
export const TENANTS = 40;
/** customer.id values cycle through this many customers: about DEAD / CUSTOMERS dead letters each. */
export const CUSTOMERS = 20_000;

export interface SeedSize {
  dead: number;
  completed: number;
  queued: number;
  audit: number;
}

/** A version-7 shaped UUID from a timestamptz expression and a distinct seed expression. */
function uuid7(at: string, seed: string): string {
  const h = `lpad(to_hex((extract(epoch FROM ${at}) * 1000)::bigint), 12, '0')`;
  const r = `md5(${seed})`;
  return `substr(${h}, 1, 8) || '-' || substr(${h}, 9, 4) || '-7' || substr(${r}, 1, 3) || '-8' || substr(${r}, 4, 3) || '-' || substr(${r}, 7, 12)`;
}

const taskArray = `ARRAY[${TASKS.map((t) => `'${t}'`).join(", ")}]`;

/**
 * Eight ways to die, skewed the way real failures are (a few errors make most dead letters), with the parts a
 * message varies by (invoice, customer, milliseconds, relation id) varying per row.
 */
const ERROR_OF = `
  CASE
    WHEN g % 100 < 40 THEN ARRAY['CardDeclined', 'card declined for invoice inv-' || g]
    WHEN g % 100 < 60 THEN ARRAY['TimeoutError', 'charge timed out after ' || (25000 + g % 5000) || ' ms']
    WHEN g % 100 < 72 THEN ARRAY['HttpError', 'POST https://payments.example/v1/charges failed with ' || (ARRAY['502', '503', '504'])[1 + g % 3]]
    WHEN g % 100 < 82 THEN ARRAY['ValidationError', 'customer "cus_' || (g % ${CUSTOMERS}) || '" has no default payment method']
    WHEN g % 100 < 89 THEN ARRAY['DatabaseError', 'deadlock detected on relation ' || (16384 + g % 50)]
    WHEN g % 100 < 94 THEN ARRAY['Error', 'read ECONNRESET']
    WHEN g % 100 < 98 THEN ARRAY['TypeError', 'Cannot read properties of undefined (reading ''address'')']
    ELSE ARRAY['RateLimited', 'rate limited, retry after ' || (1 + g % 60) || ' s']
  END`;

/** Inserts `count` rows from `from` on, in slices, so no statement's trigger transition table gets huge. */
async function inSlices(client: pg.Client, count: number, insert: (from: number, to: number) => string): Promise<void> {
  const slice = 200_000;
  for (let from = 1; from <= count; from += slice) await client.query(insert(from, Math.min(count, from + slice - 1)));
}

export async function seedDead(client: pg.Client, count: number): Promise<void> {
  await inSlices(
    client,
    count,
    (from, to) => `
    INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, created_at,
                            tenant_id, request_id, trace, errors, died_at)
    SELECT ${uuid7("created", "'dead' || g")}, '${QUEUE}', (${taskArray})[1 + g % ${TASKS.length}],
           json_build_object('customer', json_build_object('id', 'cus_' || (g % ${CUSTOMERS}), 'country', (ARRAY['MX', 'ES', 'US', 'DE'])[1 + g % 4]),
                             'invoice', 'inv-' || g, 'amount', (g * 37) % 100000, 'card_number', '4242424242424242'),
           'dead', attempts, attempts, created, created,
           'tenant-' || ((g * 7) % ${TENANTS}), 'req-' || g,
           jsonb_build_object('traceparent', '00-' || md5('trace' || g) || '-' || substr(md5('span' || g), 1, 16) || '-01'),
           (SELECT jsonb_agg(jsonb_build_object(
                     'attempt', a, 'at', created + a * interval '1 minute', 'class', e[1], 'message', e[2],
                     'stack', e[1] || ': ' || e[2] || E'\\n    at charge (file:///srv/billing/modules/billing/tasks.mjs:' || (10 + g % 40) || E':11)\\n    at runAttempt (file:///srv/node_modules/@jfast/runtime/dist/worker/attempt.js:88:22)\\n    at async Worker.execute (file:///srv/node_modules/@jfast/runtime/dist/worker/worker.js:301:9)')
                   ORDER BY a)
            FROM generate_series(1, attempts) AS a),
           created + attempts * interval '1 minute'
    FROM generate_series(${from}, ${to}) AS g,
         LATERAL (SELECT now() - interval '7 days' * (1 - g::float8 / ${count}) - interval '5 minutes' AS created,
                         1 + g % 3 AS attempts,
                         ${ERROR_OF} AS e) AS v`,
  );
}

export async function seedCompleted(client: pg.Client, count: number): Promise<void> {
  await inSlices(
    client,
    count,
    (from, to) => `
    INSERT INTO jfast_jobs (id, queue, task, payload, state, attempts, max_attempts, available_at, created_at,
                            tenant_id, claimed_at, finished_at)
    SELECT ${uuid7("created", "'done' || g")}, '${QUEUE}', (${taskArray})[1 + g % ${TASKS.length}],
           json_build_object('customer', json_build_object('id', 'cus_' || (g % ${CUSTOMERS})), 'invoice', 'inv-c' || g, 'amount', (g * 13) % 100000),
           'completed', 1, 3, created, created, 'tenant-' || (g % ${TENANTS}), created, created + interval '40 ms'
    FROM generate_series(${from}, ${to}) AS g,
         LATERAL (SELECT now() - interval '7 days' * (1 - g::float8 / ${count}) - interval '10 minutes' AS created) AS v`,
  );
}

/** Ready jobs: nine in ten due now (a backlog), one in ten scheduled for the next day. */
export async function seedQueued(client: pg.Client, count: number): Promise<void> {
  await inSlices(
    client,
    count,
    (from, to) => `
    INSERT INTO jfast_jobs (id, queue, task, payload, state, max_attempts, available_at, created_at, tenant_id)
    SELECT ${uuid7("created", "'ready' || g")}, '${QUEUE}', (${taskArray})[1 + g % ${TASKS.length}],
           json_build_object('customer', json_build_object('id', 'cus_' || (g % ${CUSTOMERS})), 'invoice', 'inv-r' || g),
           'ready', 3, CASE WHEN g % 10 = 0 THEN now() + interval '1 day' * (g::float8 / ${count}) ELSE created END, created,
           'tenant-' || (g % ${TENANTS})
    FROM generate_series(${from}, ${to}) AS g,
         LATERAL (SELECT now() - interval '1 hour' * (1 - g::float8 / ${count}) AS created) AS v`,
  );
}

export async function seedAudit(client: pg.Client, count: number): Promise<void> {
  await client.query(`
    INSERT INTO jfast_admin_audit (id, at, actor, role, action, ids, count, filter, outcome)
    SELECT ${uuid7("at", "'audit' || g")}, at, (ARRAY['ops', 'alice', 'bob'])[1 + g % 3], 'operator',
           (ARRAY['deadLetters.retry', 'deadLetters.discard', 'queues.pause', 'queues.resume'])[1 + g % 4],
           jsonb_build_array('job-' || g), 1,
           CASE WHEN g % 5 = 0 THEN jsonb_build_object('tenantId', 'tenant-' || (g % ${TENANTS})) END,
           jsonb_build_object('retried', 1)
    FROM generate_series(1, ${count}) AS g,
         LATERAL (SELECT now() - interval '30 days' * (1 - g::float8 / ${count}) AS at) AS v`);
}

/** A week of per-minute throughput for every task, as the workers' flushes would have left it. */
export async function seedThroughput(client: pg.Client): Promise<void> {
  await client.query(`
    INSERT INTO jfast_throughput (queue, minute, task, processed, failed, dead)
    SELECT '${QUEUE}', minute, task, 100 + (extract(epoch FROM minute)::bigint % 50), extract(epoch FROM minute)::bigint % 7, extract(epoch FROM minute)::bigint % 2
    FROM generate_series(date_trunc('minute', now()) - interval '7 days', date_trunc('minute', now()), interval '1 minute') AS minute,
         unnest(${taskArray}) AS task`);
}

/** Rows as the planner will see them in production, where autovacuum keeps statistics and visibility maps current. */
export async function analyze(client: pg.Client): Promise<void> {
  await client.query("VACUUM (ANALYZE) jfast_jobs");
  await client.query("VACUUM (ANALYZE) jfast_admin_audit");
  await client.query("VACUUM (ANALYZE) jfast_throughput");
}
