import { COMMANDS, commandsInGroup, type CommandEntry } from "./command-table.js";
import { GLOBAL_FLAGS, type CommandDefinition, type FlagSpec } from "./command.js";

const DOCS_CLI = "jfast docs cli";

export function topLevelHelp(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `jfast ${version}: background jobs and events for Node services`,
    "",
    "Usage: jfast <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Options:",
    "  -h, --help    show help (also after any command: jfast worker --help)",
    "  --version     print the version",
    "",
    "Commands read <root>/jfast.toml, where <root> is --root or the current directory.",
    `Docs: ${DOCS_CLI}`,
    "",
  ].join("\n");
}

export function groupHelp(group: string, entries: CommandEntry[] = commandsInGroup(group)): string {
  const width = Math.max(...entries.map((c) => c.name.length)) + 2;
  return [
    `Usage: jfast ${group} <command> [options]`,
    "",
    "Commands:",
    ...entries.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    `Run "jfast ${group} <command> --help" for a command's options. Docs: ${DOCS_CLI}`,
    "",
  ].join("\n");
}

export function commandHelp(command: CommandDefinition<any>): string {
  const flags = Object.entries({ ...command.flags, ...GLOBAL_FLAGS } as Record<string, FlagSpec>);
  const rows = flags.map(([name, spec]) => [flagLabel(name, spec), flagDescription(spec)] as const);
  const positionals = command.positionals ?? [];
  const usage = [
    `jfast ${command.name}`,
    ...positionals.map((p) => (p.variadic ? `[${p.name}...]` : `<${p.name}>`)),
    "[options]",
  ].join(" ");
  const width = Math.max(...rows.map(([label]) => label.length), ...positionals.map((p) => p.name.length)) + 2;
  return [
    `Usage: ${usage}`,
    "",
    command.description.trim(),
    "",
    ...(positionals.length
      ? ["Arguments:", ...positionals.map((p) => `  ${p.name.padEnd(width)}${p.description}`), ""]
      : []),
    "Options:",
    ...rows.map(([label, description]) => `  ${label.padEnd(width)}${description}`),
    "",
    ...(command.examples?.length ? ["Examples:", ...command.examples.map((e) => `  ${e}`), ""] : []),
    `Docs: ${command.docs}`,
    "",
  ].join("\n");
}

function flagLabel(name: string, spec: FlagSpec): string {
  const long = spec.negatable ? `--no-${name}` : `--${name}`;
  const value = spec.type === "boolean" ? "" : ` ${spec.placeholder ?? "VALUE"}`;
  return `${spec.short ? `-${spec.short}, ` : ""}${long}${value}`;
}

function flagDescription(spec: FlagSpec): string {
  if (spec.type === "boolean" || spec.default === undefined) return spec.description;
  return `${spec.description} (default: ${spec.default})`;
}
