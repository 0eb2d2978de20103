import { MAX_CONCURRENCY } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { runService } from "../run-service.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "worker",
  summary: "run jobs from the queue until SIGTERM",
  description: `
Builds the service from <root>/jfast.toml exactly as its API does (same modules, same providers from
server.ts) and runs jobs from its queue. An idle worker waits for a wake-up; it never busy-polls.

On SIGTERM or SIGINT it stops claiming and gives running jobs --grace seconds to finish; jobs still running
then are released back to the queue at once, without spending an attempt. A second signal stops waiting and
releases them immediately. The exit code is 0 after a clean shutdown.

A service with named queues ([queues.<name>]) runs each in its own slots: --queues picks which ones this
process runs (see jfast docs queues#workers); --concurrency sets the default queue's slots.`,
  flags: {
    concurrency: {
      type: "integer",
      min: 1,
      max: MAX_CONCURRENCY,
      maxReason: "the same cap as [plugin.queue] concurrency; run more workers for more",
      placeholder: "N",
      description: "jobs run at once (default: [plugin.queue] concurrency, which defaults to 4)",
    },
    queues: {
      type: "string",
      placeholder: "NAMES",
      description: "the named queues to run, comma-separated, e.g. email,media (default: every queue not paused in jfast.toml)",
    },
    grace: {
      type: "number",
      min: 0,
      default: 25,
      placeholder: "SECONDS",
      description: "on SIGTERM, how long running jobs get to finish before they are released",
    },
    root: ROOT_FLAG,
  },
  examples: ["jfast worker", "jfast worker --concurrency 10 --grace 50", "jfast worker --queues email,media", "jfast worker --root apps/example"],
  docs: "jfast docs worker",
  run({ flags, io }) {
    return runService({
      root: resolveRoot(flags.root, io.cwd),
      worker: true,
      http: false,
      host: undefined,
      concurrency: flags.concurrency,
      queues: flags.queues === undefined ? undefined : parseQueues(flags.queues),
      graceMs: Math.round(flags.grace * 1000),
      io,
    });
  },
});

/** `--queues email,media`: names, trimmed, none empty. */
function parseQueues(text: string): string[] {
  const names = text.split(",").map((n) => n.trim());
  if (names.some((n) => n === "")) throw new UsageError(`--queues takes names separated by commas, e.g. --queues email,media (got "${text}")`);
  return names;
}
