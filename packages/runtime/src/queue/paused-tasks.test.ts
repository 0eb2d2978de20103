import { describe, expect, it } from "vitest";
import type { PausedTask, PauseStore } from "../core/pause.js";
import { createLogger } from "../observability/logger.js";
import { createMemoryPauseStore } from "./pause-stores.js";
import { PausedTasks } from "./paused-tasks.js";

/**
 * A pause or resume made through a process's PausedTasks applies there at once (docs/worker.md#pausing-a-task), even
 * while a periodic refresh is reading the store: what that refresh read before the change must not undo it.
 */
function withHeldReads(store: PauseStore): { store: PauseStore; hold(): { release(): void; started: Promise<void> } } {
  let gate: { read: Promise<void>; started: () => void } | null = null;
  return {
    store: {
      ...store,
      async list() {
        const read = await store.list();
        const held = gate;
        if (held) {
          held.started();
          await held.read;
        }
        return read;
      },
    },
    hold() {
      let release!: () => void;
      let started!: () => void;
      const startedP = new Promise<void>((resolve) => (started = resolve));
      gate = { read: new Promise<void>((resolve) => (release = resolve)), started };
      return {
        started: startedP,
        release: () => {
          gate = null;
          release();
        },
      };
    },
  };
}

const logger = createLogger({ service: "test", level: "silent" });
const names = (tasks: PausedTasks) => tasks.list().map((t: PausedTask) => t.task);

describe("paused tasks of one process", () => {
  it("keeps a pause made while a refresh read the store before it", async () => {
    const held = withHeldReads(createMemoryPauseStore());
    const tasks = new PausedTasks({ store: held.store, logger, refreshMs: 60_000 });
    const read = held.hold();
    const refresh = tasks.refresh();
    await read.started;
    await tasks.pause({ task: "billing.record", by: null });
    expect(tasks.has("billing.record")).toBe(true);
    read.release();
    await refresh;
    expect(names(tasks)).toEqual(["billing.record"]);
    // The next refresh reads the store as it is now.
    await tasks.refresh();
    expect(names(tasks)).toEqual(["billing.record"]);
  });

  it("keeps a resume made while a refresh read the store before it", async () => {
    const held = withHeldReads(createMemoryPauseStore());
    const tasks = new PausedTasks({ store: held.store, logger, refreshMs: 60_000 });
    await tasks.pause({ task: "billing.record", by: null });
    const read = held.hold();
    const refresh = tasks.refresh();
    await read.started;
    await tasks.resume({ task: "billing.record" });
    read.release();
    await refresh;
    expect(tasks.has("billing.record")).toBe(false);
  });

  it("applies what another process changed, at the next refresh", async () => {
    const store = createMemoryPauseStore();
    const here = new PausedTasks({ store, logger, refreshMs: 60_000 });
    const elsewhere = new PausedTasks({ store, logger, refreshMs: 60_000 });
    await elsewhere.pause({ task: "billing.record", by: "ops" });
    expect(here.has("billing.record")).toBe(false);
    await here.refresh();
    expect(here.has("billing.record")).toBe(true);
  });
});
