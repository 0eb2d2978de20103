import type { Cancellation } from "../core/task.js";

/**
 * How one attempt is cancelled (its timeout passed, or the worker shut down past its grace period). The
 * handler sees it as `signal`. Making an AbortSignal costs more than running a no-op job and most handlers
 * never look at theirs, so the signal is made on first use; one made after the abort is already aborted,
 * with the same reason.
 */
export class AttemptCancellation implements Cancellation {
  private controller: AbortController | null = null;
  private fired = false;
  private reason: unknown = undefined;
  private onAbort: ((reason: unknown) => void) | null = null;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.fired) return;
    this.fired = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.onAbort?.(reason);
  }

  /** Rejects with the reason once aborted; never resolves. Raced against the handler. */
  rejection(): Promise<never> {
    const rejected = new Promise<never>((_, reject) => {
      if (this.fired) reject(this.reason);
      else this.onAbort = reject;
    });
    rejected.catch(() => undefined);
    return rejected;
  }
}
