/**
 * What a command module exports. One definition drives both argument parsing and `--help`, so the help
 * text can never drift from what the parser accepts.
 */
export interface FlagSpec {
  type: "boolean" | "string" | "integer" | "number";
  description: string;
  /** Shown after the flag in help: `--concurrency N`. */
  placeholder?: string;
  /** Shown as "(default: …)"; booleans default to false unless this says true. */
  default?: string | number | boolean;
  /** Lower bound for integer and number flags. */
  min?: number;
  /** Upper bound for integer and number flags, with where it comes from when it is a rule of the runtime's. */
  max?: number;
  maxReason?: string;
  short?: string;
  /** A boolean that defaults to true and is turned off with `--no-<name>`. */
  negatable?: boolean;
}

export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<S extends FlagSpec> = S["type"] extends "boolean" ? boolean : S["type"] extends "string" ? string : number;

export type FlagValues<F extends FlagSpecs> = {
  [K in keyof F]: F[K] extends { default: string | number | boolean }
    ? ValueOf<F[K]>
    : F[K]["type"] extends "boolean"
      ? boolean
      : ValueOf<F[K]> | undefined;
};

export interface PositionalSpec {
  name: string;
  description: string;
  variadic?: boolean;
}

/** Where a command writes. Commands never touch process.stdout directly, so their output is easy to follow. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  cwd: string;
  verbose: boolean;
}

export interface CommandDefinition<F extends FlagSpecs = FlagSpecs> {
  /** Full name as typed: "worker", "jobs retry". */
  name: string;
  summary: string;
  /** Paragraphs shown under the usage line. */
  description: string;
  flags: F;
  positionals?: PositionalSpec[];
  examples?: string[];
  /** The docs page that explains the command. */
  docs: string;
  /** Returns the process exit code. Long-running commands resolve when they have shut down. */
  run(input: { flags: FlagValues<F>; positionals: string[]; io: CommandIO }): Promise<number>;
}

export function defineCommand<const F extends FlagSpecs>(definition: CommandDefinition<F>): CommandDefinition<F> {
  return definition;
}

/** Flags every command accepts. */
export const GLOBAL_FLAGS = {
  verbose: { type: "boolean", description: "print stack traces with errors (same as JFAST_DEBUG=1)" },
  help: { type: "boolean", short: "h", description: "show this help" },
} as const satisfies FlagSpecs;

/** `--root` of the `jfast workspace` commands: where the workspace's package.json is. */
export const WORKSPACE_ROOT_FLAG = {
  type: "string",
  placeholder: "DIR",
  description: "the workspace root (default: the nearest directory with npm workspaces above the current one)",
} as const satisfies FlagSpec;

/** `--root`, shared by every command that builds the service. */
export const ROOT_FLAG = {
  type: "string",
  placeholder: "DIR",
  description: "the service root holding jfast.toml and modules/ (default: the current directory)",
} as const satisfies FlagSpec;

/** `--queue`, for the commands that act on one named queue's jobs (docs/queues.md#cli). */
export const QUEUE_FLAG = {
  type: "string",
  placeholder: "NAME",
  description: "the named queue to act on, as declared by [queues.<name>] (default: default)",
} as const satisfies FlagSpec;

/**
 * `--as`, for the repairs (`jfast jobs retry`, `jfast queue pause`, …): who the audit trail names
 * (docs/admin-api.md#audit-trail).
 */
export const AS_FLAG = {
  type: "string",
  placeholder: "NAME",
  description: "who the audit trail names as doing this (default: cli:<your user name>); printable, at most 200 characters",
} as const satisfies FlagSpec;
