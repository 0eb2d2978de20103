import { ConfigError } from "../errors/jfast-error.js";
import { collectSchedules } from "../scheduler/schedule.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { Plugin } from "./plugin.js";

/** `[plugin.queue] scheduler = true`: recurring tasks, leaderless, in every process that starts (docs/scheduler.md). */
export function schedulerPlugin(): Plugin<"scheduler"> {
  let scheduler: Scheduler | null = null;
  return {
    name: "scheduler",
    plugin: "queue",
    requires: ["queue"],
    after: ["database"],
    provides: ["scheduler"],
    enabled: ({ config, background }) => background && config.queue?.scheduler === true,
    check({ config, registry, logger }) {
      // A bad cron or zone in task options stops start-up here; tasks.schedule(...) added later is checked at start().
      const declared = collectSchedules(registry, { requireTasks: false });
      if (declared.length > 0 && !config.queue?.scheduler) {
        logger.warn("tasks declare schedules but the scheduler is off in this process; they fire only where [plugin.queue] scheduler = true", {
          schedules: declared.map((s) => s.name),
        });
      }
    },
    beforeStart({ config, registry }) {
      // Before any connection opens: a schedule of an unknown task stops start-up with nothing to clean up.
      if (config.queue?.scheduler) collectSchedules(registry, { requireTasks: true });
    },
    async start({ config, registry, logger, get, provide }) {
      const { startScheduler } = await import("../scheduler/start-scheduler.js");
      scheduler = await startScheduler({ config, registry, queue: get("queue")!.provider, database: get("database"), logger });
      provide("scheduler", scheduler);
      return scheduler;
    },
    async stop() {
      // Before the queue closes, so no tick is claimed against a queue that is closing.
      await scheduler?.stop();
      await scheduler?.store.close();
      scheduler = null;
    },
    unavailable(config) {
      if (!config.queue || config.queue.scheduler) return null;
      return new ConfigError(`"scheduler" runs only where it is turned on`, {
        code: "PROVIDER_UNAVAILABLE",
        hint: "set [plugin.queue] scheduler = true in jfast.toml",
        docs: "jfast docs scheduler",
      });
    },
  };
}
