import type { EnqueueJobs, ScheduleStore, StoredSchedule } from "./schedule-store.js";

/**
 * Claims kept in this process: for the memory queue and single-process use. Nothing is shared, so two
 * processes with this store would both fire every tick; the app only picks it with the memory queue.
 */
export function createMemoryScheduleStore(params: { enqueue: EnqueueJobs; now?: () => number }): ScheduleStore {
  const now = params.now ?? Date.now;
  const claims = new Map<string, Map<number, number>>();
  const last = new Map<string, number>();
  const stored = new Map<string, StoredSchedule>();
  return {
    kind: "memory",
    async lastTicks({ names }) {
      const found = new Map<string, number>();
      for (const name of names) {
        const tick = last.get(name);
        if (tick !== undefined) found.set(name, tick);
      }
      return found;
    },
    async claim({ name, tick, job }) {
      const previous = last.get(name);
      if (previous !== undefined && previous >= tick) return false;
      // Check and set happen before the first await: concurrent passes in this process cannot both win.
      last.set(name, tick);
      const history = claims.get(name) ?? new Map<number, number>();
      history.set(tick, now());
      claims.set(name, history);
      try {
        await params.enqueue([job]);
      } catch (error) {
        history.delete(tick);
        if (last.get(name) === tick) {
          if (previous === undefined) last.delete(name);
          else last.set(name, previous);
        }
        throw error;
      }
      return true;
    },
    async tickClaims({ name, from, to }) {
      const ticks = [...(claims.get(name)?.keys() ?? [])];
      const inside = ticks.filter((t) => t >= from && t <= to);
      return { claimed: inside.length, first: inside.length ? Math.min(...inside) : null, before: ticks.some((t) => t < from) };
    },
    async prune({ before }) {
      let removed = 0;
      for (const [name, history] of claims) {
        const keep = last.get(name);
        for (const [tick, claimedAt] of history) {
          if (tick !== keep && claimedAt < before) {
            history.delete(tick);
            removed++;
          }
        }
      }
      return removed;
    },
    async schedules() {
      return [...stored.values()].map((s) => structuredClone(s));
    },
    async saveSchedule({ schedule, create }) {
      if (create && stored.has(schedule.name)) return false;
      stored.set(schedule.name, structuredClone(schedule));
      return true;
    },
    async deleteSchedule({ name }) {
      return stored.delete(name);
    },
    async close() {},
  };
}
