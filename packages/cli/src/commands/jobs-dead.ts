import { defineCommand, QUEUE_FLAG, ROOT_FLAG } from "../command.js";
import { formatDeadLetters } from "../format/dead-letters.js";
import { withQueue } from "../queue-access.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "jobs dead",
  summary: "list dead letters, newest death first, with the error that killed each",
  description: `
Lists the service's dead letters, newest death first: id, task, attempts, when it died and the error that
killed it (class: message). --json prints the full records, each job with its whole error history.`,
  flags: {
    json: { type: "boolean", description: "print the full records as JSON (job, diedAt, lastError; job.errors holds every attempt)" },
    limit: { type: "integer", min: 1, default: 50, placeholder: "N", description: "how many to list" },
    queue: QUEUE_FLAG,
    root: ROOT_FLAG,
  },
  examples: ["jfast jobs dead", "jfast jobs dead --json --limit 500 | jq '.[].lastError.message'"],
  docs: "jfast docs cli#jfast-jobs-dead",
  async run({ flags, io }) {
    const dead = await withQueue(resolveRoot(flags.root, io.cwd), (backend) => backend.listDead({ limit: flags.limit }), flags.queue);
    io.out(flags.json ? `${JSON.stringify(dead, null, 2)}\n` : formatDeadLetters(dead));
    return 0;
  },
});
