import { describe, expect, it } from "vitest";
import { AttemptCancellation } from "./cancellation.js";

describe("attempt cancellation", () => {
  it("aborts a signal read before the abort, with the reason", () => {
    const cancellation = new AttemptCancellation();
    const signal = cancellation.signal;
    let heard: unknown;
    signal.addEventListener("abort", () => (heard = signal.reason));
    const reason = new Error("timed out");
    cancellation.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(heard).toBe(reason);
    expect(cancellation.signal).toBe(signal);
  });

  it("hands out an already aborted signal when it is first read after the abort", () => {
    const cancellation = new AttemptCancellation();
    const reason = new Error("shutting down");
    cancellation.abort(reason);
    expect(cancellation.signal.aborted).toBe(true);
    expect(cancellation.signal.reason).toBe(reason);
  });

  /** The outcome whenSettled reports, as a promise: "ok", or the error it was given. */
  function outcome(cancellation: AttemptCancellation, work: Promise<unknown>): { calls: () => number; result: Promise<unknown> } {
    let calls = 0;
    const result = new Promise((resolve) =>
      cancellation.whenSettled(
        work,
        () => {
          calls++;
          resolve("ok");
        },
        (error) => {
          calls++;
          resolve(error);
        },
      ),
    );
    return { calls: () => calls, result };
  }

  it("reports the abort as soon as it comes, whether before or during the work, with the first reason, once", async () => {
    const during = new AttemptCancellation();
    let finishWork!: () => void;
    const watched = outcome(during, new Promise<void>((resolve) => (finishWork = resolve)));
    during.abort(new Error("first"));
    during.abort(new Error("second"));
    expect(((await watched.result) as Error).message).toBe("first");
    // The work ending afterwards changes nothing.
    finishWork();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(watched.calls()).toBe(1);

    const before = new AttemptCancellation();
    before.abort(new Error("already"));
    expect(((await outcome(before, Promise.resolve("done")).result) as Error).message).toBe("already");
  });

  it("reports the work's own outcome while not aborted, and an abort after it is ignored", async () => {
    const cancellation = new AttemptCancellation();
    const ok = outcome(cancellation, Promise.resolve("done"));
    expect(await ok.result).toBe("ok");
    cancellation.abort(new Error("late"));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ok.calls()).toBe(1);
    const failed = await outcome(new AttemptCancellation(), Promise.reject(new Error("failed"))).result;
    expect((failed as Error).message).toBe("failed");
  });
});
