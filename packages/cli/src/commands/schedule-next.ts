import { nextCronTicks } from "@jfast/runtime";
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";

export default defineCommand({
  name: "schedule next",
  summary: "print the next ticks of a cron expression in UTC, as the scheduler computes them",
  description: `
Prints the next ticks of a five-field cron expression (or @hourly @daily @weekly @monthly @yearly), one
ISO-8601 UTC time per line, read in --tz (a zoneinfo name; UTC by default) across DST changes exactly as the
scheduler reads it: the runtime's own parser and tick computation, not a copy. --json prints an array of
strings. An invalid expression or zone exits 2 with the parser's message.`,
  flags: {
    tz: { type: "string", placeholder: "ZONE", description: "the zoneinfo zone the expression is read in", default: "UTC" },
    after: { type: "string", placeholder: "ISO", description: "list ticks strictly after this time (default: now)" },
    count: { type: "integer", placeholder: "N", description: "how many ticks to print", default: 5, min: 1 },
    json: { type: "boolean", description: "print a JSON array of ISO-8601 strings" },
  },
  positionals: [{ name: "cron", description: 'the expression, quoted: "0 3 * * *"' }],
  examples: [
    'jfast schedule next "0 3 * * *" --tz America/Mexico_City',
    'jfast schedule next "30 2 * * *" --tz Europe/Berlin --after 2025-03-29T00:00:00Z --count 3 --json',
  ],
  docs: "jfast docs scheduler#jfast-schedule-next",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) {
      throw new UsageError(
        positionals.length === 0
          ? 'give the cron expression, quoted: jfast schedule next "0 3 * * *"'
          : `expected one quoted cron expression, got ${positionals.length} words; quote it: jfast schedule next "${positionals.join(" ")}"`,
      );
    }
    if (flags.count > 10_000) throw new UsageError(`--count must be at most 10000, got ${flags.count}`);
    let after: number | undefined;
    if (flags.after !== undefined) {
      after = Date.parse(flags.after);
      if (Number.isNaN(after)) throw new UsageError(`--after expects an ISO-8601 time such as 2025-03-09T00:00:00Z, got "${flags.after}"`);
    }
    let ticks: Date[];
    try {
      ticks = nextCronTicks({ cron: positionals[0]!, timezone: flags.tz, count: flags.count, ...(after === undefined ? {} : { after }) });
    } catch (error) {
      // The expression or zone is part of the command line: a usage error, exit 2, with the parser's words.
      if (error instanceof Error && /^(CRON_INVALID|TIMEZONE_INVALID|SCHEDULE_INVALID)$/.test((error as { code?: string }).code ?? "")) {
        throw new UsageError(error.message);
      }
      throw error;
    }
    const iso = ticks.map((tick) => tick.toISOString());
    io.out(flags.json ? `${JSON.stringify(iso)}\n` : iso.map((line) => `${line}\n`).join(""));
    return 0;
  },
});
