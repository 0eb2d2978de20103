import { openConnection } from "../backends/redis/connection.js";
import { boundedDetail, type AlertEvent, type AlertStatus, type AlertStore, type StoredAlertRule } from "./alert-store.js";

/** History kept per service in Redis: the newest entries. */
const KEEP = 10_000;
/** Entries read to find one alert's history. */
const SCAN = 2_000;

const CLAIM = `local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Alerts beside the Redis queue, under its hash tag (one Cluster slot):
 *
 *   {q}:alerts:lease    STRING  the evaluator's owner, expiring (PX)
 *   {q}:alerts:rules    HASH    name → JSON StoredAlertRule (made at run time)
 *   {q}:alerts:states   HASH    name → JSON AlertStatus
 *   {q}:alerts:events   HASH    id → JSON AlertEvent (its detail bounded, DETAIL_MAX)
 *   {q}:alerts:ids      LIST    event ids, newest first, trimmed to the newest 10 000
 *   {q}:alerts:seq      STRING  the last event id
 */
export function createRedisAlertStore(params: { url: string; cluster?: boolean; queue: string }): AlertStore {
  if (!params.queue || /[{}]/.test(params.queue)) throw new TypeError(`a Redis queue name must be non-empty and free of braces, got "${params.queue}"`);
  const stem = `{${params.queue}}:alerts`;
  const k = { lease: `${stem}:lease`, rules: `${stem}:rules`, states: `${stem}:states`, events: `${stem}:events`, ids: `${stem}:ids`, seq: `${stem}:seq` };
  const redis = openConnection({ url: params.url, ...(params.cluster ? { cluster: true } : {}), queue: params.queue, role: "alerts", maxRetriesPerRequest: 3, onError: () => undefined });
  // Entries written before the detail was kept have none.
  const event = (text: string | null): AlertEvent | null => {
    if (!text) return null;
    const e = JSON.parse(text) as AlertEvent;
    return { ...e, detail: e.detail ?? null, example: e.example ?? null };
  };
  return {
    kind: "redis",
    async claimLease({ owner, ttlMs }) {
      return Number(await redis.eval(CLAIM, 1, k.lease, owner, Math.max(1, Math.round(ttlMs)))) === 1;
    },
    async releaseLease({ owner }) {
      await redis.eval(RELEASE, 1, k.lease, owner);
    },
    async rules() {
      const all = await redis.hgetall(k.rules);
      return Object.values(all)
        .map((text) => JSON.parse(text) as StoredAlertRule)
        .sort((a, b) => a.rule.name.localeCompare(b.rule.name));
    },
    async saveRule({ rule, create, by }) {
      const value = JSON.stringify({ rule, updatedAt: Date.now(), updatedBy: by } satisfies StoredAlertRule);
      if (create) return Number(await redis.hsetnx(k.rules, rule.name, value)) === 1;
      if (!(await redis.hexists(k.rules, rule.name))) return false;
      await redis.hset(k.rules, rule.name, value);
      return true;
    },
    async deleteRule({ name }) {
      return Number(await redis.hdel(k.rules, name)) === 1;
    },
    async statuses() {
      const all = await redis.hgetall(k.states);
      return new Map(Object.entries(all).map(([name, text]) => [name, JSON.parse(text) as AlertStatus]));
    },
    async setStatus(status) {
      await redis.hset(k.states, status.name, JSON.stringify(status));
    },
    async forgetStatus({ name }) {
      await redis.hdel(k.states, name);
    },
    async record(entry) {
      const id = String(await redis.incr(k.seq));
      await redis.hset(k.events, id, JSON.stringify({ ...entry, ...boundedDetail(entry), id }));
      await redis.lpush(k.ids, id);
      const dropped = await redis.lrange(k.ids, KEEP, -1);
      if (dropped.length > 0) {
        await redis.ltrim(k.ids, 0, KEEP - 1);
        await redis.hdel(k.events, ...dropped);
      }
      return id;
    },
    async updateDelivery({ id, ...rest }) {
      const current = event(await redis.hget(k.events, id));
      if (current) await redis.hset(k.events, id, JSON.stringify({ ...current, ...rest }));
    },
    async history({ alert, limit }) {
      const ids = await redis.lrange(k.ids, 0, (alert === undefined ? limit : SCAN) - 1);
      if (ids.length === 0) return [];
      const events = (await redis.hmget(k.events, ...ids)).map(event).filter((e): e is AlertEvent => e !== null);
      return events.filter((e) => alert === undefined || e.alert === alert).slice(0, limit);
    },
    async close() {
      redis.disconnect();
    },
  };
}
