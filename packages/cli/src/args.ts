import type { FlagSpec, FlagSpecs } from "./command.js";
import { UsageError } from "./errors.js";

export interface ParsedArgs {
  flags: Record<string, string | number | boolean | undefined>;
  positionals: string[];
}

/**
 * Parses `--name value`, `--name=value`, `-h`, `--no-<name>` (negatable booleans) and `--` (everything after
 * is positional). Anything the spec does not name is a usage error that names the flag, so a typo such as
 * `--concurency 8` never silently runs with the default.
 */
export function parseArgs(argv: readonly string[], flags: FlagSpecs): ParsedArgs {
  const values: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  for (const [name, spec] of Object.entries(flags)) {
    values[name] = spec.default ?? (spec.type === "boolean" ? false : undefined);
  }
  const byShort = new Map(Object.entries(flags).flatMap(([name, spec]) => (spec.short ? [[spec.short, name] as const] : [])));

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const written = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    let name: string | undefined;
    let negated = false;
    if (written.startsWith("--")) {
      const bare = written.slice(2);
      if (flags[bare]) name = bare;
      else if (bare.startsWith("no-") && flags[bare.slice(3)]?.negatable) {
        name = bare.slice(3);
        negated = true;
      }
    } else if (written.length === 2) {
      name = byShort.get(written.slice(1));
    }
    if (!name) throw new UsageError(unknownFlagMessage(written, flags));
    const spec = flags[name]!;

    if (spec.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`${written} does not take a value (got "${inline}")`);
      values[name] = !negated;
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-" && !/^-\d/.test(next))) {
        throw new UsageError(`${written} needs a value: ${written} ${spec.placeholder ?? "VALUE"}`);
      }
      raw = next;
      i++;
    }
    values[name] = convert(written, raw, spec);
  }
  return { flags: values, positionals };
}

function convert(flag: string, raw: string, spec: FlagSpec): string | number {
  if (spec.type === "string") {
    if (raw === "") throw new UsageError(`${flag} needs a non-empty value`);
    return raw;
  }
  const value = Number(raw);
  const whole = spec.type === "integer";
  if (raw.trim() === "" || !Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    throw new UsageError(`${flag} expects ${whole ? "a whole number" : "a number"}, got "${raw}"`);
  }
  if (spec.min !== undefined && value < spec.min) {
    throw new UsageError(`${flag} must be at least ${spec.min}, got ${raw}`);
  }
  if (spec.max !== undefined && value > spec.max) {
    throw new UsageError(`${flag} must be at most ${spec.max}${spec.maxReason ? ` (${spec.maxReason})` : ""}, got ${raw}`);
  }
  return value;
}

function unknownFlagMessage(written: string, flags: FlagSpecs): string {
  const base = written.startsWith("--no-") ? flags[written.slice(5)] : undefined;
  if (base?.type === "boolean") return `unknown flag ${written}: --${written.slice(5)} is off unless given`;
  const known = Object.entries(flags).flatMap(([name, spec]) => [`--${name}`, ...(spec.negatable ? [`--no-${name}`] : [])]);
  const close = known
    .map((candidate) => ({ candidate, distance: editDistance(written, candidate) }))
    .filter((c) => c.distance <= 2)
    .sort((a, b) => a.distance - b.distance)[0];
  return `unknown flag ${written}${close ? ` (did you mean ${close.candidate}?)` : ""}`;
}

/** Levenshtein distance; inputs are short flag names. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
