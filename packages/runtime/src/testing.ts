// Helpers for services testing their own tasks: an in-process backend with the real protocol.
export { MemoryBackend, createMemoryBackend } from "./backends/memory/memory-backend.js";
export { eventually } from "./testing/eventually.js";
export { createTestJfast } from "./testing/test-jfast.js";
export type { TestJfast, TestJfastOptions, RanJob, EnqueuedQuery } from "./testing/test-jfast.js";
