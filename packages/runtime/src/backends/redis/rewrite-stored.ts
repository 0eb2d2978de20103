import type { AttemptError, JobJSON } from "../../core/job.js";
import { rewriteParts, type StoredParts, type StoredRewriteResult } from "../../core/stored-rewrite.js";
import type { RedisClient } from "./connection.js";
import type { QueueKeys } from "./keys.js";

/**
 * StoredRewrite on Redis: the ids of the ready lists, the scheduled set, flow steps waiting for their parents, the
 * parked lists of paused or limited tasks and the dead set; each job's hash (`json` and `errors`) written back by rewrite.lua if it did not change.
 */
export async function rewriteStoredJobs(params: {
  redis: RedisClient;
  keys: QueueKeys;
  /** rewrite.lua: ARGV 6.. as the script reads them; 1 when written. */
  write(args: [id: string, json: string, errors: string, newJson: string, newErrors: string]): Promise<unknown>;
  rewrite(parts: StoredParts): StoredParts | null;
}): Promise<StoredRewriteResult> {
  const { redis, keys } = params;
  const result: StoredRewriteResult = { waiting: 0, dead: 0, skipped: [] };
  const tasks = new Set([...(await redis.hkeys(keys.paused)), ...(await redis.hkeys(keys.limits))]);
  const waiting = [
    ...(await Promise.all(keys.readyLists.map((list) => redis.lrange(list, 0, -1)))).flat(),
    ...(await redis.zrange(keys.scheduled, 0, -1)),
    ...(await redis.zrange(keys.waiting, 0, -1)),
    ...(await Promise.all([...tasks].map((task) => redis.lrange(keys.parked(task), 0, -1)))).flat(),
  ];
  const dead = await redis.zrange(keys.dead, 0, -1);
  for (const [ids, isDead] of [[new Set(waiting), false], [new Set(dead), true]] as const) {
    for (const id of ids) {
      const [json, errors] = await redis.hmget(keys.job(id), "json", "errors");
      if (!json) continue;
      const stored = JSON.parse(json) as JobJSON;
      // The errors recorded since enqueue live beside the JSON; the JSON's own (a dead letter retried) in it.
      const recorded = errors ? (JSON.parse(errors) as AttemptError[]) : [];
      const next = rewriteParts(id, { payload: stored.payload, errors: [...(stored.errors ?? []), ...recorded] }, params.rewrite, result.skipped);
      if (!next) continue;
      const own = (stored.errors ?? []).length;
      const newJson = JSON.stringify({ ...stored, payload: next.payload, errors: next.errors.slice(0, own) });
      const newErrors = errors ? JSON.stringify(next.errors.slice(own)) : "";
      if (Number(await params.write([id, json, errors ?? "", newJson, newErrors])) !== 1) {
        result.skipped.push({ id, reason: "claimed or changed while it was rewritten: left under its key" });
      } else if (isDead) result.dead++;
      else result.waiting! += 1;
    }
  }
  return result;
}
