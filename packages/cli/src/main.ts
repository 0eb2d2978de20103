import { readFileSync } from "node:fs";
import { parseArgs } from "./args.js";
import { COMMANDS, commandsInGroup, matchCommand } from "./command-table.js";
import { GLOBAL_FLAGS, type CommandIO } from "./command.js";
import { ExitCode, reportError, UsageError } from "./errors.js";
import { commandHelp, groupHelp, topLevelHelp } from "./help.js";
import { editDistance } from "./args.js";

export interface MainOptions {
  out?: (text: string) => void;
  err?: (text: string) => void;
  cwd?: string;
  /** JFAST_DEBUG=1 behaves like --verbose. */
  debug?: boolean;
}

/** Runs one `jfast` invocation and returns its exit code (the bin exits with it). */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const out = options.out ?? ((text: string) => void process.stdout.write(text));
  const err = options.err ?? ((text: string) => void process.stderr.write(text));
  let verbose = options.debug ?? false;
  let commandName: string | null = null;
  try {
    const first = argv[0];
    if (first === undefined) {
      err(topLevelHelp(version()));
      return ExitCode.usage;
    }
    if (first === "--help" || first === "-h" || first === "help") {
      out(topLevelHelp(version()));
      return ExitCode.ok;
    }
    if (first === "--version" || first === "-v") {
      out(`${version()}\n`);
      return ExitCode.ok;
    }
    const match = matchCommand(argv);
    if (!match) return unmatched(argv, { out, err });

    commandName = match.entry.name;
    const command = (await match.entry.load()).default;
    const parsed = parseArgs(match.rest, { ...command.flags, ...GLOBAL_FLAGS });
    verbose ||= parsed.flags.verbose === true;
    if (parsed.flags.help) {
      out(commandHelp(command));
      return ExitCode.ok;
    }
    if (!command.positionals?.length && parsed.positionals.length > 0) {
      throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    }
    const { verbose: _verbose, help: _help, ...flags } = parsed.flags;
    const io: CommandIO = { out, err, cwd: options.cwd ?? process.cwd(), verbose };
    return await command.run({ flags: flags as never, positionals: parsed.positionals, io });
  } catch (error) {
    return reportError(error, { err, verbose, command: commandName });
  }
}

/** No command matched: a group word alone ("jobs"), or a typo. */
function unmatched(argv: readonly string[], io: { out: (t: string) => void; err: (t: string) => void }): number {
  const [word, next] = argv;
  const group = commandsInGroup(word!);
  if (group.length > 0) {
    if (next === "--help" || next === "-h") {
      io.out(groupHelp(word!, group));
      return ExitCode.ok;
    }
    const detail = next === undefined || next.startsWith("-") ? "needs a command" : `has no command "${next}"`;
    io.err(`jfast: "jfast ${word}" ${detail}\n\n${groupHelp(word!, group)}`);
    return ExitCode.usage;
  }
  const names = [...new Set(COMMANDS.map((c) => c.name.split(" ")[0]!))];
  const close = names.find((name) => editDistance(word!, name) <= 2);
  io.err(`jfast: unknown command "${word}"${close ? ` (did you mean "${close}"?)` : ""}\nrun "jfast --help" for the list of commands\n`);
  return ExitCode.usage;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}
