import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, freePort, REPO_ROOT, start, type Running } from "./support/processes.js";

// Drives apps/example exactly as the README tells a newcomer to: `npx jfast dev` in its directory, on its
// default configuration (PostgreSQL embedded under apps/example/.jfast), reached only over HTTP.
const EXAMPLE = path.join(REPO_ROOT, "apps/example");

let dev: Running | null = null;
afterEach(async () => {
  if (dev && dev.child.exitCode === null) {
    process.kill(-dev.child.pid!, "SIGKILL");
    await dev.exited;
  }
  dev = null;
});

describe("apps/example under `npx jfast dev`", () => {
  it("serves /ready on PORT, and a tenant's request enqueues a job that runs for that tenant", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    dev = start("npx", ["jfast", "dev"], { cwd: EXAMPLE, env: { PORT: String(port), DATABASE_URL: "" }, group: true });
    await dev.waitFor('"msg":"worker started"', 150_000);

    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { status: string; checks: { queue: { backend: string } } };
    expect(report.checks.queue.backend).toBe("postgres");

    const acme = { "x-tenant-id": "acme", "content-type": "application/json" };
    const created = await fetch(`${base}/invoices`, { method: "POST", headers: acme, body: JSON.stringify({ customer_email: "ap@acme.test", amount_cents: 4200 }) });
    expect(created.status).toBe(201);
    const invoice = (await created.json()) as { id: string };

    const sent = await fetch(`${base}/invoices/${invoice.id}/send`, { method: "POST", headers: acme });
    expect(sent.status).toBe(202);
    const { job_id } = (await sent.json()) as { job_id: string };

    // The task wrote emails_sent with currentTenantId() as seen inside the handler.
    const emails = await eventually(
      async () => {
        const body = (await (await fetch(`${base}/invoices/${invoice.id}`, { headers: acme })).json()) as { status: string; emails: { tenantId: string; jobId: string }[] };
        return body.emails.length > 0 ? body : undefined;
      },
      { what: "the invoice email to be sent", timeoutMs: 60_000 },
    );
    expect(emails.status).toBe("sent");
    expect(emails.emails).toEqual([expect.objectContaining({ tenantId: "acme", jobId: job_id })]);

    // Another tenant sees none of it; a request without a tenant is refused.
    expect((await fetch(`${base}/invoices/${invoice.id}`, { headers: { "x-tenant-id": "globex" } })).status).toBe(404);
    expect((await fetch(`${base}/invoices`, { method: "POST", body: "{}" })).status).toBe(400);
    // The outbox write happened in the request's transaction: no invoice, no job.
    expect((await fetch(`${base}/invoices/does-not-exist/send`, { method: "POST", headers: acme })).status).toBe(404);

    // A receipt with a large total: extraction runs, then an alert job enqueued from inside that task.
    const receipt = (await (await fetch(`${base}/receipts`, { method: "POST", headers: acme, body: JSON.stringify({ text: "Desk\nTOTAL: $2,350.00" }) })).json()) as { id: string };
    const alerts = await eventually(
      async () => {
        const rows = (await (await fetch(`${base}/alerts`, { headers: acme })).json()) as { subject: string; tenantId: string; totalCents: number }[];
        return rows.find((a) => a.subject.includes(receipt.id));
      },
      { what: "the alert for the large receipt", timeoutMs: 60_000 },
    );
    expect(alerts).toMatchObject({ tenantId: "acme", totalCents: 235_000 });

    const stats = (await (await fetch(`${base}/queue/stats`)).json()) as { tasks: string[] };
    expect(stats.tasks).toEqual(expect.arrayContaining(["alert.notify", "invoice.send_email", "receipt.extract"]));

    process.kill(-dev.child.pid!, "SIGTERM");
    const exit = await dev.exited;
    expect(exit.stdout + exit.stderr).toContain('"msg":"stopped"');
  });
});
