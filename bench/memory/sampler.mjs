// Loaded into a measured process with `node --import <this file>` (NODE_OPTIONS): every SAMPLE_MS it appends
// one JSON line with its RSS and heap to JFAST_MEM_SAMPLES. With JFAST_MEM_GC=1 it first forces a full
// garbage collection, so heapUsed is the live heap ("heap after GC"), comparable from sample to sample.
// The forced collection costs a pause of a few milliseconds per sample; leave it off where latency is measured.
import { appendFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { isMainThread } from "node:worker_threads";

const file = process.env.JFAST_MEM_SAMPLES;
const role = process.env.JFAST_MEM_ROLE ?? "process";
const every = Number(process.env.JFAST_MEM_SAMPLE_MS ?? 30_000);
const withGc = process.env.JFAST_MEM_GC === "1";

// NODE_OPTIONS reaches worker threads too (a worker's heartbeat thread): only the main thread reports, once per process.
if (file && isMainThread) {
  let gc = null;
  if (withGc) {
    // The documented way to reach gc() without starting node with --expose-gc (NODE_OPTIONS does not take it on Node 20).
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc");
  }
  const sample = () => {
    const before = process.memoryUsage();
    if (gc) gc();
    const after = gc ? process.memoryUsage() : before;
    const line = { t: Date.now(), role, pid: process.pid, main: true, rss: before.rss, heapUsed: before.heapUsed, heapTotal: before.heapTotal, heapAfterGc: gc ? after.heapUsed : null, external: after.external, arrayBuffers: after.arrayBuffers };
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // The bench removed its directory: nothing left to report to.
    }
  };
  const timer = setInterval(sample, every);
  timer.unref();
  setTimeout(sample, 1000).unref();
}
