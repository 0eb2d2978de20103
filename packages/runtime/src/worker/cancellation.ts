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

  /** Settles as `work` does, or rejects with the reason as soon as the attempt is aborted, whichever is first. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.fired) {
      work.catch(() => undefined);
      return Promise.reject(this.reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.onAbort = reject;
      work.then(resolve, reject);
    });
  }
}
