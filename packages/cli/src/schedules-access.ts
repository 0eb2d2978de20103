import type { AdminRepairs, IntervalSpec, Jfast, ScheduleSpecPatch } from "@jfast/runtime";
import { AS_FLAG, ROOT_FLAG } from "./command.js";
import { CliError, UsageError } from "./errors.js";
import { withQueue } from "./queue-access.js";
import { cliRepairs, repairActor } from "./repairs.js";
import { resolveRoot } from "./service.js";

/** The flags of `jfast schedules create` and `update`: the options a declared schedule takes. */
export const SPEC_FLAGS = {
  task: { type: "string", placeholder: "TASK", description: "the task each tick enqueues, e.g. report.send" },
  cron: { type: "string", placeholder: "EXPR", description: 'a five-field cron expression, quoted: "0 3 * * *"' },
  every: { type: "string", placeholder: "DURATION", description: "an interval counted from the Unix epoch: 30s, 5m, 1h30m, 1d" },
  timezone: { type: "string", placeholder: "ZONE", description: "the zoneinfo zone a cron expression is read in (default: UTC)" },
  payload: { type: "string", placeholder: "JSON", description: "the payload object each tick's job gets (scheduled_for is added)" },
  "catch-up": { type: "string", placeholder: "true|false", description: "after downtime, fire the most recent missed tick (default: true)" },
  as: AS_FLAG,
  root: ROOT_FLAG,
} as const;

/** Errors of the schedule's definition, given on the command line: usage errors (exit 2), as `jfast schedule next` has them. */
const INPUT_CODES = new Set(["CRON_INVALID", "TIMEZONE_INVALID", "SCHEDULE_INVALID", "SCHEDULE_TASK_UNKNOWN"]);

/** Runs `use` with the admin API's schedule repairs of the service at `root`, acting as `--as`. */
export async function withSchedules(params: { root: string | undefined; as: string | undefined; cwd: string; io: { err(text: string): void } }, use: (schedules: AdminRepairs["schedules"], jfast: Jfast) => Promise<number>): Promise<number> {
  const actor = repairActor(params.as);
  try {
    return await withQueue(resolveRoot(params.root, params.cwd), async (_backend, jfast) => use((await cliRepairs(jfast, params.io, actor)).schedules, jfast));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && INPUT_CODES.has(code)) throw new UsageError((error as Error).message);
    throw error;
  }
}

/** `--every 1h30m` as the runtime's interval: days, hours, minutes, seconds, milliseconds. */
export function parseDuration(text: string): IntervalSpec {
  const units = { d: "days", h: "hours", m: "minutes", s: "seconds", ms: "milliseconds" } as const;
  const spec: Record<string, number> = {};
  const pattern = /(\d+(?:\.\d+)?)(ms|d|h|m|s)/g;
  let consumed = "";
  for (const match of text.matchAll(pattern)) {
    const unit = units[match[2] as keyof typeof units];
    spec[unit] = (spec[unit] ?? 0) + Number(match[1]);
    consumed += match[0];
  }
  if (consumed !== text || consumed === "") {
    throw new UsageError(`--every expects a duration such as 30s, 5m, 1h30m or 1d, got "${text}"`);
  }
  return spec as IntervalSpec;
}

export function parsePayload(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--payload is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError("--payload must be a JSON object, e.g. '{\"span\":\"day\"}'");
  return value as Record<string, unknown>;
}

/** The flags given, as a schedule's options (only those given, for an edit). */
export function specFromFlags(flags: { task?: string | undefined; cron?: string | undefined; every?: string | undefined; timezone?: string | undefined; payload?: string | undefined; "catch-up"?: string | undefined }): ScheduleSpecPatch {
  if (flags.cron !== undefined && flags.every !== undefined) throw new UsageError("give --cron or --every, not both");
  const catchUp = flags["catch-up"];
  if (catchUp !== undefined && catchUp !== "true" && catchUp !== "false") throw new UsageError(`--catch-up is true or false, got "${catchUp}"`);
  return {
    ...(flags.task !== undefined ? { task: flags.task } : {}),
    ...(flags.cron !== undefined ? { cron: flags.cron } : {}),
    ...(flags.every !== undefined ? { every: parseDuration(flags.every) } : {}),
    ...(flags.timezone !== undefined ? { timezone: flags.timezone } : {}),
    ...(flags.payload !== undefined ? { payload: parsePayload(flags.payload) } : {}),
    ...(catchUp !== undefined ? { catchUp: catchUp === "true" } : {}),
  };
}

export function oneName(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one schedule name: jfast schedules ${command} <name>`);
  return positionals[0]!;
}

export function noSchedules(): CliError {
  return new CliError("this service has no schedule store another process can reach", {
    code: "SCHEDULES_UNAVAILABLE",
    hint: 'use the PostgreSQL, Redis or RabbitMQ queue (with [plugin.queue] scheduler = true where the schedules should fire)',
    docs: "jfast docs scheduler#at-run-time",
  });
}
