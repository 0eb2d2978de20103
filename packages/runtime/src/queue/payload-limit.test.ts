import { describe, expect, it } from "vitest";
import { createMemoryBackend } from "../backends/memory/memory-backend.js";
import { Job } from "../core/job.js";
import { TaskRegistry } from "../core/registry.js";
import { configSchema } from "../config/schema.js";
import { JfastError } from "../errors/jfast-error.js";
import { createQueueProvider } from "./queue-provider.js";

function provider(maxPayloadBytes: number) {
  const backend = createMemoryBackend();
  const registry = new TaskRegistry();
  for (const name of ["a.big", "a.small", "a.fits"]) registry.task(name, () => {});
  return { backend, queue: createQueueProvider({ backend, name: "q", registry, defaultMaxAttempts: 3, maxPayloadBytes }) };
}

describe("[plugin.queue] max_payload_bytes", () => {
  it("defaults to 1 MiB", () => {
    const raw = configSchema.parse({ service: { name: "s" }, plugin: { queue: {} } });
    expect(raw.plugin.queue?.max_payload_bytes).toBe(1024 * 1024);
  });

  it("refuses a payload over the limit at enqueue, with a code and the fix, and stores nothing", async () => {
    const { backend, queue } = provider(100);
    const big = new Job({ task: "a.big", payload: { text: "x".repeat(200) } });
    const error = await queue.enqueue([new Job({ task: "a.small", payload: {} }), big]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JfastError);
    expect((error as JfastError).code).toBe("PAYLOAD_TOO_LARGE");
    expect((error as JfastError).hint).toMatch(/max_payload_bytes/);
    expect((error as Error).message).toMatch(/"a\.big" is \d+ bytes, over the limit of 100 bytes/);
    // The whole call is refused before the backend sees any of it.
    expect((await backend.depths()).ready).toBe(0);
  });

  it("accepts a payload exactly at the limit (counted in UTF-8 bytes of its JSON)", async () => {
    const payload = { t: "é".repeat(10) };
    const bytes = Buffer.byteLength(JSON.stringify(payload));
    const { backend, queue } = provider(bytes);
    await queue.enqueue(new Job({ task: "a.fits", payload }));
    expect((await backend.depths()).ready).toBe(1);
    const { queue: tighter } = provider(bytes - 1);
    expect(() => tighter.prepare(new Job({ task: "a.fits", payload }))).toThrow(/over the limit/);
  });
});
