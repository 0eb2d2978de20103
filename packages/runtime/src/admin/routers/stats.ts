import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { MAX_STATS_SINCE_MS, parseSince, readStatsLatency, readStatsSeries, statsUnsupported, type StatsLatencyView, type StatsSeriesView } from "../../queue/stats-views.js";
import { THROUGHPUT_FLUSH_MS } from "../../queue/throughput-recorder.js";
import { backendCall } from "../queue-access.js";
import { queueInput } from "../queue-scope.js";
import { router, viewerProcedure } from "../trpc.js";

/** `1h`, `24h`, `7d`…: the window back from now (docs/admin-api.md#throughput-run-time-and-wait-history), at most 7 days. */
const sinceInput = z
  .string()
  .max(10)
  .default("1h")
  .transform((text, ctx) => {
    const ms = parseSince(text);
    if (ms === null || ms > MAX_STATS_SINCE_MS) {
      ctx.addIssue({ code: "custom", message: `since is a duration like 1h, 24h or 7d, at most 7d (not "${text}")` });
      return z.NEVER;
    }
    return ms;
  });

const statsInput = z
  .strictObject({ since: sinceInput, task: z.string().min(1).max(200).optional(), queue: queueInput })
  .prefault({});

/** `enabled` false: nothing to read (no queue, or no shared store: `reason` says why, NOT_SUPPORTED). */
export type StatsView<T> = T & { enabled: boolean; reason: string | null; flushSeconds: number };

const FLUSH_SECONDS = THROUGHPUT_FLUSH_MS / 1000;

/** Throughput, run time and wait per minute or hour, as every process's workers record them. */
export const statsRouter = router({
  /** Per task and per queue over the window: counts, run and wait percentiles, the oldest waiting job's age. */
  latency: viewerProcedure.input(statsInput).query(async ({ ctx, input }): Promise<StatsView<StatsLatencyView>> => {
    const queue = ctx.sources.queue();
    if (queue) checkQueue(queue.queues, input.queue);
    const reason = queue ? statsUnsupported(queue, input.queue)?.message ?? null : "the service has no queue";
    if (!queue || reason) return { enabled: false, reason, flushSeconds: FLUSH_SECONDS, sinceMs: input.since, span: "minute", tasks: [], queues: [], stored: "memory" };
    const view = await backendCall(queue, "reading stats", () => readStatsLatency(queue, { sinceMs: input.since, task: input.task, queue: input.queue }));
    return { enabled: true, reason: null, flushSeconds: FLUSH_SECONDS, ...view };
  }),
  /** One point per minute (a window up to a day) or hour (up to 7 days), summed over tasks or of one task. */
  series: viewerProcedure.input(statsInput).query(async ({ ctx, input }): Promise<StatsView<StatsSeriesView>> => {
    const queue = ctx.sources.queue();
    if (queue) checkQueue(queue.queues, input.queue);
    const reason = queue ? statsUnsupported(queue, input.queue)?.message ?? null : "the service has no queue";
    if (!queue || reason) return { enabled: false, reason, flushSeconds: FLUSH_SECONDS, sinceMs: input.since, span: "minute", points: [], stored: "memory" };
    const view = await backendCall(queue, "reading stats", () => readStatsSeries(queue, { sinceMs: input.since, task: input.task, queue: input.queue }));
    return { enabled: true, reason: null, flushSeconds: FLUSH_SECONDS, ...view };
  }),
});

function checkQueue(queues: ReadonlyMap<string, unknown>, name: string | undefined): void {
  if (name !== undefined && !queues.has(name)) {
    throw new TRPCError({ code: "BAD_REQUEST", message: `no queue named "${name}"; the service's queues are ${[...queues.keys()].join(", ")}` });
  }
}
