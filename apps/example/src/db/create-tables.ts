import type { DatabaseProvider } from "@jfast/runtime";

/**
 * Creates the billing tables if missing. Runs in every process that starts the service (API and worker may
 * start together), so it takes a transaction-scoped advisory lock: concurrent CREATE TABLE IF NOT EXISTS
 * can otherwise collide on the catalog. A real service would use its migration tool here.
 */
export async function createTables(database: DatabaseProvider): Promise<void> {
  await database.sql.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('billing.create_tables'))`);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS invoices (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        customer_email text NOT NULL,
        amount_cents integer NOT NULL,
        status text NOT NULL DEFAULT 'draft',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Added after the first release: a database created by an earlier version gains them here.
    for (const column of ["paid_at timestamptz", "shipment_id text", "tracking_code text"]) {
      await tx.query(`ALTER TABLE invoices ADD COLUMN IF NOT EXISTS ${column}`);
    }
    await tx.query(`
      CREATE TABLE IF NOT EXISTS emails_sent (
        id serial PRIMARY KEY,
        tenant_id text,
        invoice_id text NOT NULL,
        recipient text NOT NULL,
        job_id text NOT NULL,
        attempt integer NOT NULL,
        sent_at timestamptz NOT NULL DEFAULT now()
      )`);
    await tx.query(`CREATE INDEX IF NOT EXISTS emails_sent_invoice ON emails_sent (tenant_id, invoice_id)`);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS receipts (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        text text NOT NULL,
        total_cents integer,
        status text NOT NULL DEFAULT 'pending',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS alerts (
        id serial PRIMARY KEY,
        tenant_id text,
        subject text NOT NULL,
        total_cents integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  });
}
