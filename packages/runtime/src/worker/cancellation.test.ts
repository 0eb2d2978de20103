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

  it("rejects its race promise on abort, whether armed before or after, and keeps the first reason", async () => {
    const early = new AttemptCancellation();
    const racing = early.rejection();
    early.abort(new Error("first"));
    early.abort(new Error("second"));
    await expect(racing).rejects.toThrow("first");

    const late = new AttemptCancellation();
    late.abort(new Error("already"));
    await expect(late.rejection()).rejects.toThrow("already");
  });

  it("never settles its race promise while not aborted", async () => {
    const cancellation = new AttemptCancellation();
    const outcome = await Promise.race([cancellation.rejection().then(() => "settled", () => "settled"), new Promise((r) => setTimeout(() => r("pending"), 20))]);
    expect(outcome).toBe("pending");
  });
});
