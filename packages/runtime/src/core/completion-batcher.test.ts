import { describe, expect, it } from "vitest";
import { CompletionBatcher } from "./completion-batcher.js";

/** Runs `fn` after `depth` hops through the microtask queue. */
function afterMicrotasks(depth: number, fn: () => void): void {
  if (depth === 0) fn();
  else queueMicrotask(() => afterMicrotasks(depth - 1, fn));
}

describe("CompletionBatcher", () => {
  it("writes a completion added at any moment while the last write winds down (none is left behind)", async () => {
    // An add that lands after the drain saw nothing pending but before it cleared its flag used to wait for a
    // drain that never came: the shutdown of a worker whose last job completed at that moment then hung.
    for (let depth = 0; depth < 12; depth++) {
      const written: string[] = [];
      const batcher = new CompletionBatcher(async (ids) => {
        written.push(...ids);
      });
      const late = new Promise<void>((resolve, reject) => {
        void batcher.add("first", "w").then(() => afterMicrotasks(depth, () => batcher.add("late", "w").then(resolve, reject)));
      });
      const outcome = await Promise.race([late.then(() => "written"), new Promise((resolve) => setTimeout(() => resolve("stranded"), 200))]);
      expect(outcome, `an add ${depth} microtasks after the first write`).toBe("written");
      await batcher.flush();
      expect(written).toEqual(["first", "late"]);
    }
  });

  it("coalesces completions that arrive during a write into the next one, per worker", async () => {
    const writes: Array<[string, string[]]> = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new CompletionBatcher(async (ids, workerId) => {
      writes.push([workerId, ids]);
      if (writes.length === 1) await gate;
    });
    const all = [batcher.add("a", "w1"), batcher.add("b", "w1"), batcher.add("c", "w2"), batcher.add("d", "w1")];
    release();
    await Promise.all(all);
    await batcher.flush();
    expect(writes).toEqual([
      ["w1", ["a"]],
      ["w1", ["b", "d"]],
      ["w2", ["c"]],
    ]);
  });

  it("rejects every completion of a failed write, and writes the next ones", async () => {
    let fail = true;
    const batcher = new CompletionBatcher(async () => {
      if (fail) throw new Error("connection lost");
    });
    await expect(batcher.add("a", "w")).rejects.toThrow("connection lost");
    fail = false;
    await expect(batcher.add("b", "w")).resolves.toBeUndefined();
  });

  it("gives results beside the ids only to a batch where a completion has one", async () => {
    const writes: Array<[string[], unknown]> = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new CompletionBatcher(async (ids, _workerId, results) => {
      writes.push([ids, results]);
      if (writes.length === 1) await gate;
    });
    const all = [batcher.add("a", "w"), batcher.add("b", "w"), batcher.add("c", "w", { value: 1 }), batcher.add("d", "w")];
    release();
    await Promise.all(all);
    expect(writes).toEqual([
      [["a"], undefined],
      [["b", "c", "d"], [undefined, { value: 1 }, undefined]],
    ]);
  });
});
