import type { LeaseExtender } from "../../core/lease-extender.js";
import { createRedisBackend, type RedisBackendOptions } from "./redis-backend.js";

export type RedisLeaseExtenderOptions = Pick<RedisBackendOptions, "url" | "cluster" | "queue" | "prefix" | "workerTtlMs">;

/**
 * The heartbeat thread's own connection (core/lease-extender.ts): a backend over the same keys that is never set
 * up, so it runs no sweep or timer of its own and only ever calls extend.lua.
 */
export async function openLeaseExtender(options: RedisLeaseExtenderOptions): Promise<LeaseExtender> {
  const backend = createRedisBackend(options);
  // Connected as the heartbeat thread starts: a first extension that must connect first may come too late.
  await backend.connected();
  return {
    async extend(params) {
      return (await backend.extendLeases(params)).cancelled;
    },
    close: () => backend.close(),
  };
}
