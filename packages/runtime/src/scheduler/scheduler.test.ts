import { describe, expect, it } from "vitest";
import type { Job } from "../core/job.js";
import { createLogger } from "../observability/logger.js";
import { createSchedule } from "./schedule.js";
import { Scheduler, type SchedulerClock } from "./scheduler.js";
import { createMemoryScheduleStore } from "./stores/memory-store.js";
import type { ScheduleStore } from "./stores/schedule-store.js";
import { tickJobId } from "./tick-job.js";

class FakeClock implements SchedulerClock {
  private sleepers: { at: number; resolve: () => void }[] = [];
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
    this.wake();
  }
  advance(ms: number): void {
    this.t += ms;
    this.wake();
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (ms <= 0) return resolve();
      const sleeper = { at: this.t + ms, resolve };
      this.sleepers.push(sleeper);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
  private wake(): void {
    const due = this.sleepers.filter((s) => s.at <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.at > this.t);
    for (const s of due) s.resolve();
  }
}

const logger = createLogger({ service: "test", level: "silent" });

/** A queue that keeps each job id once, as every backend does. */
function fakeQueue() {
  const jobs = new Map<string, Job>();
  return {
    jobs,
    enqueue: async (batch: Job[]) => {
      for (const job of batch) if (!jobs.has(job.id)) jobs.set(job.id, job);
    },
    scheduledFor: () => [...jobs.values()].map((j) => (j.payload as { scheduled_for: string }).scheduled_for).sort(),
  };
}

function scheduler(params: { clock: FakeClock; store: ScheduleStore; schedules: ReturnType<typeof createSchedule>[] }) {
  return new Scheduler({ ...params, logger });
}

const hourly = (options: { catchUp?: boolean; name?: string } = {}) =>
  createSchedule("report.hourly", { cron: "0 * * * *", payload: { span: "hour" }, ...options });

describe("Scheduler", () => {
  it("turns a due tick into a normal job: scheduled_for in UTC, id from schedule name + tick", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:30:00Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => clock.now() });
    const s = scheduler({ clock, store, schedules: [hourly()] });
    await s.runPass();
    expect(queue.jobs.size).toBe(0);
    clock.set("2024-06-01T10:00:00Z");
    const wakeAt = await s.runPass();
    // It sleeps until the next tick, but never longer than a minute, to notice claims made elsewhere.
    expect(new Date(wakeAt).toISOString()).toBe("2024-06-01T10:01:00.000Z");
    expect(s.status().schedules[0]!.nextTick).toBe("2024-06-01T11:00:00.000Z");
    const [job] = [...queue.jobs.values()];
    expect(job!.task).toBe("report.hourly");
    expect(job!.payload).toEqual({ span: "hour", scheduled_for: "2024-06-01T10:00:00.000Z" });
    expect(job!.id).toBe(tickJobId("report.hourly", Date.parse("2024-06-01T10:00:00Z")));
    expect(job!.tenantId).toBeNull();
    // Same schedule name and tick, same id, whichever process derives it.
    expect(tickJobId("report.hourly", Date.parse("2024-06-01T10:00:00Z"))).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(tickJobId("report.hourly-2", Date.parse("2024-06-01T10:00:00Z"))).not.toBe(job!.id);
    await s.runPass();
    expect(queue.jobs.size).toBe(1);
  });

  it("keeps to the store's clock: a process 30 s ahead neither fires a tick early nor claims ahead of the others", async () => {
    const store = { t: Date.parse("2024-06-01T09:59:00Z") };
    // This process's clock runs 30 s ahead of the store's (its host lost NTP).
    const clock = new FakeClock(store.t + 30_000);
    const queue = fakeQueue();
    const memory = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => store.t });
    const withServerTime: ScheduleStore = { ...memory, kind: "postgres", serverTime: async () => store.t };
    const s = scheduler({ clock, store: withServerTime, schedules: [hourly()] });
    await s.runPass();
    // 09:59:45 by the store, 10:00:15 by this process: the 10:00 tick is not due yet.
    store.t = Date.parse("2024-06-01T09:59:45Z");
    clock.set(new Date(store.t + 30_000).toISOString());
    const wakeAt = await s.runPass();
    expect(queue.jobs.size).toBe(0);
    // It wakes at 10:00 by the store's clock (10:00:30 by its own).
    expect(new Date(wakeAt).toISOString()).toBe("2024-06-01T10:00:00.000Z");
    store.t = Date.parse("2024-06-01T10:00:01Z");
    clock.set(new Date(store.t + 30_000).toISOString());
    await s.runPass();
    expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z"]);
  });

  it("after downtime fires only the most recent missed tick, once", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:59:00Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => clock.now() });
    const first = scheduler({ clock, store, schedules: [hourly()] });
    clock.set("2024-06-01T10:00:00Z");
    await first.runPass();
    // Down from 10:00:30 to 14:20: 11:00, 12:00, 13:00 and 14:00 were missed.
    clock.set("2024-06-01T14:20:00Z");
    const second = scheduler({ clock, store, schedules: [hourly()] });
    await second.runPass();
    await second.runPass();
    expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z", "2024-06-01T14:00:00.000Z"]);
    clock.set("2024-06-01T15:00:00Z");
    await second.runPass();
    expect(queue.scheduledFor().at(-1)).toBe("2024-06-01T15:00:00.000Z");
  });

  it("with catchUp: false skips the missed tick too, and fires the next on time", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:59:00Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => clock.now() });
    const s = scheduler({ clock, store, schedules: [hourly({ catchUp: false })] });
    clock.set("2024-06-01T10:00:00Z");
    await s.runPass();
    clock.set("2024-06-01T13:20:00Z");
    await s.runPass();
    expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z"]);
    clock.set("2024-06-01T14:00:00Z");
    await s.runPass();
    expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z", "2024-06-01T14:00:00.000Z"]);
  });

  it("treats a schedule with no claim as new: it starts at its next tick, whatever passed before", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T10:20:00Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => clock.now() });
    const s = scheduler({ clock, store, schedules: [hourly()] });
    await s.runPass();
    expect(queue.jobs.size).toBe(0);
    expect(s.status().schedules[0]!.nextTick).toBe("2024-06-01T11:00:00.000Z");
    clock.set("2024-06-01T11:00:00Z");
    await s.runPass();
    expect(queue.scheduledFor()).toEqual(["2024-06-01T11:00:00.000Z"]);
  });

  it("renaming a schedule makes it new: no catch-up under the new name", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:59:00Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => clock.now() });
    const old = scheduler({ clock, store, schedules: [hourly({ name: "hourly-report" })] });
    clock.set("2024-06-01T10:00:00Z");
    await old.runPass();
    // Redeployed at 12:30 with a new name: the old name's 12:00 would have been caught up; the new one waits.
    clock.set("2024-06-01T12:30:00Z");
    const renamed = scheduler({ clock, store, schedules: [hourly({ name: "report-every-hour" })] });
    await renamed.runPass();
    expect(queue.jobs.size).toBe(1);
    clock.set("2024-06-01T13:00:00Z");
    await renamed.runPass();
    expect(queue.jobs.has(tickJobId("report-every-hour", Date.parse("2024-06-01T13:00:00Z")))).toBe(true);
    expect(queue.jobs.size).toBe(2);
  });

  it("two replicas sharing a store enqueue each tick once, in any order and with skewed clocks", async () => {
    const clockA = new FakeClock(Date.parse("2024-06-01T09:59:00Z"));
    const clockB = new FakeClock(Date.parse("2024-06-01T09:58:00Z"));
    const queue = fakeQueue();
    let enqueues = 0;
    const store = createMemoryScheduleStore({
      enqueue: async (jobs) => {
        enqueues++;
        await queue.enqueue(jobs);
      },
    });
    const every = createSchedule("rates.refresh", { every: { minutes: 5 } });
    const a = scheduler({ clock: clockA, store, schedules: [every] });
    const b = scheduler({ clock: clockB, store, schedules: [every] });
    for (let minute = 0; minute < 30; minute++) {
      clockA.set(new Date(Date.parse("2024-06-01T10:00:00Z") + minute * 60_000).toISOString());
      // B's clock runs 700 ms behind, and the two race for the same tick.
      clockB.set(new Date(clockA.now() - 700).toISOString());
      await Promise.all(minute % 2 ? [a.runPass(), b.runPass()] : [b.runPass(), a.runPass()]);
      clockB.advance(700);
      await b.runPass();
    }
    expect(queue.scheduledFor()).toEqual(
      ["10:00", "10:05", "10:10", "10:15", "10:20", "10:25"].map((t) => `2024-06-01T${t}:00.000Z`),
    );
    expect(enqueues).toBe(6);
    // Once a later tick is claimed, an earlier one can no longer be: the last tick never moves backwards.
    const early = Date.parse("2024-06-01T10:20:00Z");
    expect(await store.claim({ name: "rates.refresh", tick: early, job: [...queue.jobs.values()][0]! })).toBe(false);
  });

  it("a failed enqueue releases the claim; the next pass takes the tick and the status says so meanwhile", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:59:00Z"));
    const queue = fakeQueue();
    let fail = true;
    const store = createMemoryScheduleStore({
      enqueue: async (jobs) => {
        if (fail) throw new Error("queue unreachable");
        await queue.enqueue(jobs);
      },
    });
    const s = scheduler({ clock, store, schedules: [hourly()] });
    s.start();
    try {
      clock.set("2024-06-01T10:00:00Z");
      await waitFor(() => s.status().lastError !== null);
      const status = s.status();
      expect(status.status).toBe("degraded");
      expect(status.reason).toContain("queue unreachable");
      expect(status.schedules[0]!.lastError?.message).toBe("queue unreachable");
      expect((await store.lastTicks({ names: ["report.hourly"] })).size).toBe(0);
      fail = false;
      clock.advance(5_000);
      await waitFor(() => queue.jobs.size === 1);
      await waitFor(() => s.status().status === "ok");
      expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z"]);
      expect(s.status().lastError?.message).toBe("queue unreachable");
    } finally {
      await s.stop();
    }
    expect(s.status()).toMatchObject({ status: "degraded", running: false, reason: "the scheduler is stopped" });
  });

  it("runs its loop on the clock: sleeps until the next tick, no busy wait", async () => {
    const clock = new FakeClock(Date.parse("2024-06-01T09:59:59Z"));
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue });
    let reads = 0;
    const counting: ScheduleStore = { ...store, lastTicks: (p) => (reads++, store.lastTicks(p)) };
    const s = scheduler({ clock, store: counting, schedules: [createSchedule("rates.refresh", { every: { seconds: 1 } })] });
    s.start();
    try {
      await waitFor(() => reads === 1);
      await new Promise((r) => setTimeout(r, 50));
      expect(reads).toBe(1);
      for (let i = 1; i <= 3; i++) {
        clock.advance(1000);
        await waitFor(() => queue.jobs.size === i);
      }
      expect(queue.scheduledFor()).toEqual(["2024-06-01T10:00:00.000Z", "2024-06-01T10:00:01.000Z", "2024-06-01T10:00:02.000Z"]);
      expect(reads).toBe(4);
    } finally {
      await s.stop();
    }
  });

  it("prunes old claims but keeps each schedule's last", async () => {
    let now = Date.parse("2024-06-01T10:00:00Z");
    const queue = fakeQueue();
    const store = createMemoryScheduleStore({ enqueue: queue.enqueue, now: () => now });
    const job = (name: string, tick: number) => createJob(name, tick);
    for (const tick of [0, 1, 2]) {
      await store.claim({ name: "a", tick, job: job("a", tick) });
      now += 1000;
    }
    await store.claim({ name: "b", tick: 5, job: job("b", 5) });
    expect(await store.prune({ before: now + 1 })).toBe(2);
    expect(await store.lastTicks({ names: ["a", "b"] })).toEqual(new Map([["a", 2], ["b", 5]]));
  });
});

function createJob(name: string, tick: number): Job {
  return { id: tickJobId(name, tick) } as Job;
}

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
