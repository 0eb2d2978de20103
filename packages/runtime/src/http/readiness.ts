import type { JfastConfig } from "../config/load-config.js";
import type { Depths } from "../core/queue-backend.js";
import type { RunningPlugins } from "../plugins/plugin.js";

export type CheckStatus = "ok" | "degraded" | "unavailable";

export interface ReadinessReport {
  status: CheckStatus;
  checks: Record<string, { status: CheckStatus; [key: string]: unknown }>;
}

/** Probes can arrive many times a second from several orchestrators: share one check per window. */
const CACHE_MS = 1000;

export function createReadiness(params: { config: JfastConfig; running: RunningPlugins }) {
  let cached: { at: number; report: Promise<ReadinessReport> } | null = null;

  async function compute(): Promise<ReadinessReport> {
    const checks: ReadinessReport["checks"] = {};
    const queue = params.running.get("queue")?.provider ?? null;
    if (params.config.queue) {
      if (!queue) {
        checks.queue = { status: "unavailable", error: "not started" };
      } else {
        try {
          const depths: Depths = await queue.depths();
          checks.queue = {
            status: depths.dead > 0 ? "degraded" : "ok",
            backend: queue.backend.kind,
            dead: depths.dead,
            ready: depths.ready,
            running: depths.running,
            scheduled: depths.scheduled,
            // A backlog past the exact count (docs/postgres.md#a-large-backlog-exact-up-to-50-000-estimated-beyond): ready and scheduled are estimates.
            ...(depths.estimated ? { estimated: true } : {}),
            ...(depths.dead > 0 ? { reason: `${depths.dead} dead letter(s): inspect with \`jfast jobs dead\`` } : {}),
          };
        } catch (error) {
          checks.queue = { status: "unavailable", backend: queue.backend.kind, error: (error as Error).message };
        }
      }
    }
    if (params.config.queue?.scheduler) {
      // Reported within the queue check, and under its own name as well. A stopped or failing scheduler is
      // `degraded`, never `unavailable`: recurring work runs late, the replica still serves its requests.
      const scheduler = params.running.get("scheduler");
      const report: ReadinessReport["checks"][string] = scheduler
        ? { ...scheduler.status() }
        : { status: "degraded", running: false, reason: "the scheduler is not running" };
      checks.scheduler = report;
      if (checks.queue) {
        checks.queue.scheduler = report;
        if (report.status !== "ok" && checks.queue.status === "ok") checks.queue.status = "degraded";
      }
    }
    const outbox = params.running.get("outbox");
    if (outbox) {
      try {
        checks.outbox = await outbox.health();
      } catch (error) {
        checks.outbox = { status: "unavailable", error: (error as Error).message };
      }
    }
    if (params.config.kafka) {
      // A blocked partition (a handler failing on a message) degrades; a broker out of reach is unavailable.
      const events = params.running.get("kafka");
      if (!events) {
        checks.events = { status: "unavailable", error: "not started" };
      } else {
        try {
          checks.events = { ...(await events.health()) };
        } catch (error) {
          checks.events = { status: "unavailable", error: (error as Error).message };
        }
      }
    }
    const statuses = Object.values(checks).map((c) => c.status);
    const status: CheckStatus = statuses.includes("unavailable") ? "unavailable" : statuses.includes("degraded") ? "degraded" : "ok";
    return { status, checks };
  }

  return {
    check(): Promise<ReadinessReport> {
      const now = Date.now();
      if (!cached || now - cached.at > CACHE_MS) cached = { at: now, report: compute() };
      return cached.report;
    },
  };
}

/**
 * What /ready answers a caller it does not know: each check's status, without depths, ids or error text
 * (a backend's error names hosts, users and schemas). The full report is for development and the admin API.
 */
export function minimalReport(report: ReadinessReport): ReadinessReport {
  return { status: report.status, checks: Object.fromEntries(Object.entries(report.checks).map(([name, check]) => [name, { status: check.status }])) };
}
