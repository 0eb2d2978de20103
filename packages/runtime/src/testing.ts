// Helpers for services testing their own tasks: an in-process backend with the real protocol.
export { MemoryBackend, createMemoryBackend } from "./backends/memory/memory-backend.js";
export { eventually } from "./testing/eventually.js";
