import { afterEach, describe, expect, it } from "vitest";
import { BackendError } from "../../src/errors/jfast-error.js";
import { createRedisBackend, type RedisBackend } from "../../src/backends/redis/redis-backend.js";
import { makeJob } from "../conformance/harness.js";
import { dropQueue, openBackend, rawClient, uniqueQueue } from "./redis-test-env.js";

/** Driver errors come out as BackendError with a code, a fix and no password. */
describe("redis: connection and driver errors", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it("stops start-up with BACKEND_UNAVAILABLE when Redis cannot be reached, without leaking the password", async () => {
    // Nothing listens on port 1.
    const backend = createRedisBackend({ url: "redis://jfast:s3cret@127.0.0.1:1/0", queue: uniqueQueue("unreachable"), startupWaitMs: 300 });
    cleanups.push(() => backend.close());
    const error = await backend.setup().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).code).toBe("BACKEND_UNAVAILABLE");
    expect((error as BackendError).hint).toMatch(/REDIS_URL/);
    expect((error as BackendError).docs).toBe("jfast docs redis");
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect((error as Error).message).not.toMatch(/s3cret/);
  });

  it("names a clash with keys of another kind under the queue's hash tag", async () => {
    const queue = uniqueQueue("clash");
    let backend: RedisBackend | null = await openBackend(queue);
    cleanups.push(async () => {
      await backend?.close();
      await dropQueue(queue);
    });
    const raw = rawClient();
    try {
      await raw.set(backend.keys.ready, "not a list");
    } finally {
      raw.disconnect();
    }
    const error = await backend.enqueue({ jobs: [makeJob()] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as BackendError).code).toBe("BACKEND_KEY_CLASH");
    expect((error as BackendError).hint).toMatch(/own \[plugin.queue\] name/);
    await backend.close();
    backend = null;
  });

  it("refuses work after close with BACKEND_CLOSED", async () => {
    const queue = uniqueQueue("closed");
    const backend = await openBackend(queue);
    cleanups.push(() => dropQueue(queue));
    await backend.close();
    await expect(backend.depths()).rejects.toMatchObject({ code: "BACKEND_CLOSED" });
  });
});
