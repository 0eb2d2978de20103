/**
 * One worker process of the scaling benchmark: opens the service at argv[2] (its jfast.toml), says "ready" on
 * stdout, starts its worker at "go" on stdin (then prints its handler count every 100 ms), and at "stop" stops it
 * and prints how many handlers it ran.
 */
import { createInterface } from "node:readline";
import { createJfast, task } from "@jfast/runtime";

const root = process.argv[2]!;
const concurrency = Number(process.argv[3] ?? 10);
let ran = 0;
const noop = task("scale.noop", async () => {
  ran++;
});
const slow = task("scale.sleep5", async () => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  ran++;
});
const silent = { debug() {}, info() {}, warn() {}, error: console.error };

const jfast = await createJfast({ root, env: {}, tasks: [noop, slow], logger: silent as never });
await jfast.start();
const worker = jfast.createWorker({ concurrency });
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "go") {
    worker.start();
    // Progress for the coordinator: the broker's own counts do not see another consumer's unacked messages.
    setInterval(() => process.stdout.write(`${JSON.stringify({ progress: ran })}\n`), 100).unref();
  }
  if (line === "stop") {
    await worker.stop({ graceMs: 5000 });
    await jfast.stop();
    process.stdout.write(`${JSON.stringify({ ran })}\n`);
    process.exit(0);
  }
}
