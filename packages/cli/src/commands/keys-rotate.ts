import { loadConfig, rotateEncryptionKeys, type KeyRotationReport } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { CliError } from "../errors.js";
import { openService, resolveRoot } from "../service.js";

export default defineCommand({
  name: "keys rotate",
  summary: "re-encrypt waiting jobs, dead letters and outbox rows with the first key of JFAST_ENCRYPTION_KEYS",
  description: `
Re-encrypts with the first key of JFAST_ENCRYPTION_KEYS what waits: every queue's ready and scheduled jobs and
its dead letters, and the outbox's job rows, whatever key of the list encrypted them. Run it after putting a new
key first in JFAST_ENCRYPTION_KEYS (and deploying every process with it); once it reports nothing skipped, the old
key can leave the list. Running jobs keep their key until they finish; running it again is harmless.

PostgreSQL (and embedded PGlite) and Redis rewrite jobs in place. RabbitMQ rewrites its dead letters but cannot
change a message waiting in the broker: those keep their key until a worker takes them (NOT_SUPPORTED is
printed), so keep the old key listed until the queue has drained.

Exit codes: 0 done; 1 some jobs or rows were skipped (a key the list no longer holds, or claimed meanwhile:
listed on stderr); 2 usage error.`,
  flags: {
    json: { type: "boolean", description: "print the report as JSON" },
    root: ROOT_FLAG,
  },
  examples: [
    `JFAST_ENCRYPTION_KEYS="k2:<new key>,k1:<old key>" jfast keys rotate`,
    "jfast keys rotate --json | jq '.queues[].waiting'",
  ],
  docs: "jfast docs cli#jfast-keys-rotate",
  async run({ flags, io }) {
    const root = resolveRoot(flags.root, io.cwd);
    const config = await loadConfig({ root });
    if (config.queue?.backend === "memory") {
      throw new CliError("the memory queue keeps its jobs inside the process that runs them; another process cannot re-encrypt them", {
        code: "MEMORY_BACKEND",
        hint: `the memory queue holds nothing at rest to rotate; use backend = "postgres", "redis" or "rabbitmq" to keep jobs between processes`,
        docs: "jfast docs security#encryption-at-rest",
      });
    }
    const { jfast } = await openService({ root, entry: false, quiet: true, background: false });
    let report: KeyRotationReport;
    try {
      report = await rotateEncryptionKeys(jfast);
    } finally {
      await jfast.stop();
    }
    io.out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatRotation(report));
    const skipped = [...report.queues.flatMap((q) => q.skipped), ...(report.outbox?.skipped ?? [])];
    for (const s of skipped) io.err(`jfast: skipped ${s.id}: ${s.reason}\n`);
    return skipped.length > 0 ? 1 : 0;
  },
});

function formatRotation(report: KeyRotationReport): string {
  const lines = [`re-encrypting with key "${report.kid}"`];
  for (const q of report.queues) {
    const waiting = q.waiting === null ? "waiting jobs NOT_SUPPORTED" : `${q.waiting} waiting`;
    lines.push(`queue ${q.queue} (${q.backend}): ${waiting}, ${q.dead} dead letters rewritten${q.skipped.length ? `, ${q.skipped.length} skipped` : ""}`);
    if (q.notSupported) lines.push(`  NOT_SUPPORTED: ${q.notSupported}`);
  }
  if (report.outbox) lines.push(`outbox: ${report.outbox.rewritten} job rows rewritten${report.outbox.skipped.length ? `, ${report.outbox.skipped.length} skipped` : ""}`);
  return `${lines.join("\n")}\n`;
}
