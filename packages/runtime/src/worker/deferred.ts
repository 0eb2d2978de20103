export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  settled: boolean;
}

export function createDeferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  const deferred: Deferred<T> = {
    promise,
    settled: false,
    resolve(value: T) {
      if (deferred.settled) return;
      deferred.settled = true;
      resolve(value);
    },
  };
  return deferred;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
