import { alertsRouter } from "./routers/alerts.js";
import { auditRouter } from "./routers/audit.js";
import { contractsRouter } from "./routers/contracts.js";
import { deadLettersRouter } from "./routers/dead-letters.js";
import { eventsRouter } from "./routers/events.js";
import { flowsRouter } from "./routers/flows.js";
import { jobsRouter } from "./routers/jobs.js";
import { keysRouter } from "./routers/keys.js";
import { outboxRouter } from "./routers/outbox.js";
import { overviewRouter } from "./routers/overview.js";
import { queuesRouter } from "./routers/queues.js";
import { schedulesRouter } from "./routers/schedules.js";
import { statsRouter } from "./routers/stats.js";
import { traceRouter } from "./routers/trace.js";
import { workersRouter } from "./routers/workers.js";
import { router } from "./trpc.js";

/** The admin API every service serves under /jfast/admin (SPEC §12). */
export const adminRouter = router({
  overview: overviewRouter,
  deadLetters: deadLettersRouter,
  jobs: jobsRouter,
  keys: keysRouter,
  flows: flowsRouter,
  queues: queuesRouter,
  schedules: schedulesRouter,
  stats: statsRouter,
  workers: workersRouter,
  outbox: outboxRouter,
  events: eventsRouter,
  contracts: contractsRouter,
  audit: auditRouter,
  alerts: alertsRouter,
  trace: traceRouter,
});

export type AdminRouter = typeof adminRouter;
