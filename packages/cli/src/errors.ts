/** Exit codes every command shares. Command-specific ones (e.g. `jobs retry`: 1 = some ids unknown) are documented per command. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
} as const;

/** The command line itself is wrong (unknown flag, missing argument). Exit 2 with a pointer to `--help`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * A failure the CLI explains itself (no jfast.toml here, the port is taken). Shaped like the runtime's
 * JfastError: a hint naming the fix and the docs page, printed without a stack.
 */
export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly docs: string | undefined;

  constructor(message: string, options: { code: string; hint?: string; docs?: string; cause?: unknown }) {
    let text = message;
    if (options.hint) text += `\n  fix: ${options.hint}`;
    if (options.docs) text += `\n  see: ${options.docs}`;
    super(text, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.code = options.code;
    this.hint = options.hint;
    this.docs = options.docs;
  }
}

/**
 * Errors jfast raises on purpose carry a code, a hint and a docs page (the runtime's JfastError formats the
 * last two into its message). Recognised by shape so that `--help` does not have to load the runtime.
 */
function isExplained(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "string" &&
    "hint" in error &&
    "docs" in error
  );
}

/** Prints an error the way users should see it and returns the exit code. */
export function reportError(error: unknown, params: { err: (text: string) => void; verbose: boolean; command: string | null }): number {
  const { err, verbose, command } = params;
  if (error instanceof UsageError) {
    err(`jfast: ${error.message}\nrun "jfast${command ? ` ${command}` : ""} --help" for usage\n`);
    return ExitCode.usage;
  }
  if (isExplained(error)) {
    err(`jfast: ${error.message}\n`);
    if (verbose) err(`${stackWithCauses(error)}\n`);
    else if (error.cause !== undefined) err(`  (run with --verbose or JFAST_DEBUG=1 for the underlying error and stack)\n`);
    return ExitCode.failure;
  }
  // Not raised on purpose: a bug or an untranslated driver error. The stack is what gets it fixed.
  err(`jfast: unexpected error: ${describe(error)}\n${stackWithCauses(error)}\n`);
  return ExitCode.failure;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function stackWithCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    parts.push(depth === 0 ? stackOf(current) : `caused by: ${stackOf(current)}`);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join("\n");
}

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? describe(error)) : String(error);
}
