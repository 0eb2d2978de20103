import { readFileSync } from "node:fs";
import type { RedisClient } from "./connection.js";

/**
 * The Lua scripts of the Redis backend, one operation per file under scripts/. Each is sent as lib.lua
 * followed by the operation, so the shared helpers (and the KEYS/ARGV layout they read) are written once.
 * ioredis runs them with EVALSHA and falls back to EVAL when the server's script cache is empty (after a
 * restart), so a reconnect needs no reloading step.
 */
export const SCRIPT_NAMES = [
  "enqueue",
  "enqueue-hand-off",
  "enqueue-unique",
  "enqueue-keyed",
  "claim",
  "extend",
  "complete",
  "retry",
  "kill",
  "expire",
  "expire-due",
  "debounce",
  "release",
  "snooze",
  "cancel",
  "run-now",
  "delete-job",
  "recover",
  "promote",
  "quarantine",
  "retry-dead",
  "discard-dead",
  "list-dead",
  "depths-by-task",
  "depths-keyed",
  "list-keyed",
  "resume",
  "prune",
  "prune-keys",
  "claim-pruner",
  "release-pruner",
  "rewrite",
  "update-job",
  "enqueue-flow",
  "cancel-flow",
  "complete-spawn",
  "progress",
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Every script declares the same seven keys (see keys.ts `scriptKeys` and the header of lib.lua). */
const NUMBER_OF_KEYS = 7;

let sources: Map<ScriptName, string> | null = null;

function load(): Map<ScriptName, string> {
  if (sources) return sources;
  const read = (name: string) => readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), "utf8");
  const lib = read("lib");
  sources = new Map(SCRIPT_NAMES.map((name) => [name, `${lib}\n${read(name)}`]));
  return sources;
}

/** Replicas that must hold a script's writes before it counts as done (WAIT), and how long to wait for them. */
export interface ReplicaWait {
  replicas: number;
  timeoutMs: number;
}

export type ScriptRunner = (name: ScriptName, keys: readonly string[], args: ReadonlyArray<string | number>, wait?: ReplicaWait) => Promise<unknown>;

/**
 * Registers every script on a connection; call the result with the queue's script keys and the arguments.
 * With `wait`, the script and `WAIT <replicas> <timeout>` go in one pipeline: on a Cluster the pipeline goes to
 * the node serving the keys' slot, so WAIT counts the replicas of the node that ran the script. Fewer replicas
 * than asked within the timeout rejects with a NOREPLICAS error (the write stays on the primary, unconfirmed).
 */
export function defineScripts(redis: RedisClient, params: { cluster?: boolean } = {}): ScriptRunner {
  for (const [name, lua] of load()) {
    // On a Cluster the scripts carry a shebang: Redis 7 then refuses (CROSSSLOT-style error) any key a script
    // touches outside the slot of its declared keys, declared or not, instead of silently reaching it.
    redis.defineCommand(commandName(name), { numberOfKeys: NUMBER_OF_KEYS, lua: params.cluster ? `#!lua\n${lua}` : lua });
  }
  type Commands = Record<string, (...args: Array<string | number>) => unknown>;
  const commands = redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>;
  return async (name, keys, args, wait) => {
    if (!wait || wait.replicas <= 0) return commands[commandName(name)]!(...keys, ...args);
    const pipeline = redis.pipeline();
    (pipeline as unknown as Commands)[commandName(name)]!(...keys, ...args);
    pipeline.call("WAIT", wait.replicas, wait.timeoutMs);
    const [[scriptError, result] = [null, null], [waitError, acknowledged] = [null, 0]] = (await pipeline.exec()) ?? [];
    if (scriptError) throw scriptError;
    if (waitError) throw waitError;
    if (Number(acknowledged) < wait.replicas) {
      throw new Error(`NOREPLICAS ${String(acknowledged)} of ${wait.replicas} replicas acknowledged the write within ${wait.timeoutMs} ms`);
    }
    return result;
  };
}

/** Each script's command name on the client, made once: a script runs for every claim, enqueue and completion. */
const COMMAND_NAMES = new Map<ScriptName, string>(SCRIPT_NAMES.map((name) => [name, `jfast_${name.replace(/-/g, "_")}`]));

function commandName(name: ScriptName): string {
  return COMMAND_NAMES.get(name)!;
}
