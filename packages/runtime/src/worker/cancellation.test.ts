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

  it("ends a race at the abort, whether aborted before or during it, with the first reason", async () => {
    const during = new AttemptCancellation();
    const racing = during.race(new Promise(() => undefined));
    during.abort(new Error("first"));
    during.abort(new Error("second"));
    await expect(racing).rejects.toThrow("first");

    const before = new AttemptCancellation();
    before.abort(new Error("already"));
    await expect(before.race(Promise.resolve("done"))).rejects.toThrow("already");
  });

  it("settles a race as its work does while not aborted", async () => {
    const cancellation = new AttemptCancellation();
    expect(await cancellation.race(Promise.resolve("done"))).toBe("done");
    await expect(new AttemptCancellation().race(Promise.reject(new Error("failed")))).rejects.toThrow("failed");
  });
});
