import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

/**
 * The Lua scripts of the Redis backend, one operation per file under scripts/. Each is sent as lib.lua
 * followed by the operation, so the shared helpers (and the KEYS/ARGV layout they read) are written once.
 * ioredis runs them with EVALSHA and falls back to EVAL when the server's script cache is empty (after a
 * restart), so a reconnect needs no reloading step.
 */
export const SCRIPT_NAMES = [
  "enqueue",
  "enqueue-hand-off",
  "claim",
  "extend",
  "complete",
  "retry",
  "kill",
  "release",
  "snooze",
  "cancel",
  "recover",
  "promote",
  "quarantine",
  "retry-dead",
  "discard-dead",
  "list-dead",
  "depths-by-task",
  "resume",
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Every script declares the same six keys (see keys.ts `scriptKeys` and the header of lib.lua). */
const NUMBER_OF_KEYS = 6;

let sources: Map<ScriptName, string> | null = null;

function load(): Map<ScriptName, string> {
  if (sources) return sources;
  const read = (name: string) => readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), "utf8");
  const lib = read("lib");
  sources = new Map(SCRIPT_NAMES.map((name) => [name, `${lib}\n${read(name)}`]));
  return sources;
}

/** Registers every script on a connection; call the result with the queue's script keys and the arguments. */
export function defineScripts(redis: Redis): (name: ScriptName, keys: readonly string[], args: ReadonlyArray<string | number>) => Promise<unknown> {
  for (const [name, lua] of load()) {
    redis.defineCommand(commandName(name), { numberOfKeys: NUMBER_OF_KEYS, lua });
  }
  const commands = redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>;
  return (name, keys, args) => commands[commandName(name)]!(...keys, ...args);
}

function commandName(name: ScriptName): string {
  return `jfast_${name.replace(/-/g, "_")}`;
}
