import { auditRouter } from "./routers/audit.js";
import { contractsRouter } from "./routers/contracts.js";
import { deadLettersRouter } from "./routers/dead-letters.js";
import { eventsRouter } from "./routers/events.js";
import { flowsRouter } from "./routers/flows.js";
import { jobsRouter } from "./routers/jobs.js";
import { outboxRouter } from "./routers/outbox.js";
import { overviewRouter } from "./routers/overview.js";
import { queuesRouter } from "./routers/queues.js";
import { schedulesRouter } from "./routers/schedules.js";
import { router } from "./trpc.js";

/** The admin API every service serves under /jfast/admin (SPEC §12). */
export const adminRouter = router({
  overview: overviewRouter,
  deadLetters: deadLettersRouter,
  jobs: jobsRouter,
  flows: flowsRouter,
  queues: queuesRouter,
  schedules: schedulesRouter,
  outbox: outboxRouter,
  events: eventsRouter,
  contracts: contractsRouter,
  audit: auditRouter,
});

export type AdminRouter = typeof adminRouter;
