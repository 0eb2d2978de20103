import { defineCommand, ROOT_FLAG } from "../command.js";
import { noSchedules, withSchedules } from "../schedules-access.js";

export default defineCommand({
  name: "schedules list",
  summary: "list the service's schedules, declared and made at run time, with their next tick",
  description: `
One line per schedule: name, origin (code or runtime), state (active or paused), when it fires, task and next
tick (UTC), read from the scheduler's store as every process reads it. --json prints the full records: payload,
catchUp, the next five ticks, the last claimed tick and who changed it last.`,
  flags: { json: { type: "boolean", description: "print a JSON array of the schedules" }, root: ROOT_FLAG },
  examples: ["jfast schedules list", "jfast schedules list --json"],
  docs: "jfast docs cli#jfast-schedules",
  async run({ flags, io }) {
    return withSchedules({ root: flags.root, as: undefined, cwd: io.cwd, io: { err: () => undefined } }, async (schedules) => {
      const listed = await schedules.list({ count: 5 });
      if (listed === null) throw noSchedules();
      if (flags.json) {
        io.out(`${JSON.stringify(listed, null, 2)}\n`);
        return 0;
      }
      if (listed.length === 0) {
        io.out("no schedules\n");
        return 0;
      }
      const rows = listed.map((s) => [
        s.name,
        s.origin,
        s.paused ? "paused" : "active",
        s.cron ? `${s.cron}${s.timezone && s.timezone !== "UTC" ? ` (${s.timezone})` : ""}` : `every ${s.everyMs! / 1000}s`,
        s.task,
        s.paused ? "-" : (s.nextTicks[0] ?? "-"),
      ]);
      const header = ["NAME", "ORIGIN", "STATE", "WHEN", "TASK", "NEXT TICK"];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      for (const row of [header, ...rows]) io.out(`${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")}\n`);
      return 0;
    });
  },
});
