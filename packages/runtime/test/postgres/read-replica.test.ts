// [plugin.database] read_url: the admin API's views and /metrics read from a streaming replica, so a busy
// dashboard does not load the primary; writes and the claim stay on the primary; a replica that goes away
// sends the reads back to the primary until it returns. A primary and a replica of the test's own, on loopback.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Job } from "../../src/core/job.js";
import { loadConfig } from "../../src/config/load-config.js";
import { OPERATOR, QUEUE_TUNING, VIEWER, call, eventually, startAdminApp, type AdminApp } from "../admin/admin-harness.js";
import { scrape, value } from "../observability/prometheus.js";
import { startReplicaPair, type PrivateReplicaPair } from "./private-replica.js";

async function onServer<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("postgres: reads from a replica (read_url)", () => {
  let pair: PrivateReplicaPair;
  let app: AdminApp;
  beforeAll(async () => {
    pair = await startReplicaPair();
    app = await startAdminApp({
      setup: async () => ({
        plugins: ["database", "queue"],
        sections: `[plugin.database]\nurl = "${pair.primaryUrl}"\nread_url = "${pair.replicaUrl}"\npool_size = 4\n\n[plugin.queue]\nbackend = "postgres"\n${QUEUE_TUNING}`,
        cleanup: async () => undefined,
      }),
    });
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await pair?.destroy();
  });

  const scheduledIn = async (where: "admin" | "metrics") => {
    if (where === "metrics") return value(await scrape(app.jfast), "jfast_queue_depth", { task: "billing.send_receipt", state: "scheduled" }) ?? 0;
    const { data } = await call(app.jfast, "queues.list", { token: VIEWER });
    return (data.tasks.find((t: { task: string }) => t.task === "billing.send_receipt")?.scheduled as number | undefined) ?? 0;
  };
  const later = (n: number) => Array.from({ length: n }, () => new Job({ task: "billing.send_receipt", payload: {}, delayMs: 3_600_000 }));

  it("the views follow the replica: while it stops replaying, they show what it has; writes still reach the primary", async () => {
    await app.jfast.require("queue").enqueue(later(2));
    await eventually("the replica has the 2 jobs", async () => (await scheduledIn("admin")) === 2);
    expect(await scheduledIn("metrics")).toBe(2);

    await onServer(pair.replicaUrl, (c) => c.query("SELECT pg_wal_replay_pause()"));
    try {
      await app.jfast.require("queue").enqueue(later(3));
      const onPrimary = await onServer(pair.primaryUrl, async (c) => {
        const { rows } = await c.query<{ n: string }>("SELECT count(*) AS n FROM jfast_jobs WHERE task = 'billing.send_receipt'");
        return Number(rows[0]!.n);
      });
      expect(onPrimary).toBe(5);
      // Replay is paused: the dashboard's and /metrics' reads see the replica's 2, not the primary's 5.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await scheduledIn("admin")).toBe(2);
      expect(await scheduledIn("metrics")).toBe(2);
      const listed = await call(app.jfast, "jobs.list", { token: VIEWER, input: { state: "scheduled", limit: 50 } });
      expect(listed.status).toBe(200);
      expect(listed.data.items.length).toBe(2);
      // An operator's action is a write: it runs on the primary while the replica lags.
      const ids = (listed.data.items as { id: string }[]).map((j) => j.id);
      const ran = await call(app.jfast, "jobs.runNow", { token: OPERATOR, input: { id: ids[0] }, mutation: true });
      expect(ran.status).toBe(200);
    } finally {
      await onServer(pair.replicaUrl, (c) => c.query("SELECT pg_wal_replay_resume()"));
    }
    await eventually("the replica caught up", async () => (await scheduledIn("admin")) === 4);
    expect(await scheduledIn("metrics")).toBe(4);
  });

  it("a replica that goes away sends the views to the primary until it is back", async () => {
    const before = await scheduledIn("admin");
    await app.jfast.require("queue").enqueue(later(1));
    await pair.withReplicaDown(async () => {
      expect(await scheduledIn("admin")).toBe(before + 1);
      expect(await scheduledIn("metrics")).toBe(before + 1);
    });
    await eventually("reads from the replica again", async () => (await scheduledIn("admin")) === before + 1);
  });

  it("read_url without a primary url is refused with the fix", async () => {
    const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const root = await mkdtemp(path.join(tmpdir(), "jfast-readurl-"));
    try {
      await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "x"\n\n[plugins]\nenabled = ["database"]\n\n[plugin.database]\nread_url = "${pair.replicaUrl}"\n`);
      await expect(loadConfig({ root, env: {} })).rejects.toMatchObject({
        code: "CONFIG_INVALID",
        hint: expect.stringContaining("[plugin.database] url"),
        docs: "jfast docs postgres#reading-from-a-replica",
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
