import type { RedisClient } from "./connection.js";
import { BackendError } from "../../errors/jfast-error.js";
import { redactUrl } from "./errors.js";
import type { RedisBackendOptions } from "./options.js";

const MIN_REDIS = [6, 2] as const;
/** Cluster: the scripts' shebang (one slot enforced by the server, scripts.ts) needs Redis 7. */
const MIN_REDIS_CLUSTER = [7, 0] as const;

/** Start-up refuses a Redis too old for the queue's commands (LMOVE, BLMOVE) or, on a cluster, its scripts. */
export async function requireVersion(redis: RedisClient, options: Pick<RedisBackendOptions, "cluster" | "url">): Promise<void> {
  const info = await redis.info("server");
  const version = /redis_version:(\d+)\.(\d+)/.exec(info);
  const minimum = options.cluster ? MIN_REDIS_CLUSTER : MIN_REDIS;
  if (version && (Number(version[1]) < minimum[0] || (Number(version[1]) === minimum[0] && Number(version[2]) < minimum[1]))) {
    const why = options.cluster ? "on Redis Cluster" : "(LMOVE, BLMOVE)";
    throw new BackendError(`the Redis queue needs Redis ${minimum.join(".")} or newer ${why}; ${redactUrl(options.url)} runs ${version[1]}.${version[2]}`, {
      code: "BACKEND_UNSUPPORTED",
      hint: "upgrade Redis, or choose [plugin.queue] backend = \"postgres\"",
      docs: "jfast docs redis",
    });
  }
}
