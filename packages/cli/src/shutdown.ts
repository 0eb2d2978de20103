/**
 * SIGTERM / SIGINT handling for long-running commands (worker, dev):
 *   first signal   graceful: `graceful()` runs (stop claiming, give running jobs their grace)
 *   second signal  `immediate()`: stop waiting now; running jobs are released at once
 *   third signal   give up on a clean exit (e.g. the database hangs while releasing): exit 1 now
 * `signalled` resolves on the first signal, so a command can also notice one that arrived during start-up.
 */
export interface ShutdownSignals {
  readonly signalled: Promise<NodeJS.Signals>;
  readonly received: NodeJS.Signals | null;
  dispose(): void;
}

export function watchShutdownSignals(params: {
  onFirst?: (signal: NodeJS.Signals) => void;
  onSecond: (signal: NodeJS.Signals) => void;
  onThird?: (signal: NodeJS.Signals) => void;
}): ShutdownSignals {
  let count = 0;
  let received: NodeJS.Signals | null = null;
  let resolveSignalled!: (signal: NodeJS.Signals) => void;
  const signalled = new Promise<NodeJS.Signals>((resolve) => (resolveSignalled = resolve));
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      received = signal;
      params.onFirst?.(signal);
      resolveSignalled(signal);
    } else if (count === 2) {
      params.onSecond(signal);
    } else {
      params.onThird?.(signal);
      process.exit(1);
    }
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
  return {
    signalled,
    get received() {
      return received;
    },
    dispose() {
      process.off("SIGTERM", handler);
      process.off("SIGINT", handler);
    },
  };
}
