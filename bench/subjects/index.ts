/** Every subject `npm run bench` knows, by the name BENCH_ONLY and run-subject.ts take. */
import type { Subject } from "../lib/subject.js";
import { amqplibSubject } from "./amqplib.js";
import { bullmqSubject } from "./bullmq.js";
import { graphileSubject } from "./graphile-worker.js";
import { jfastSubject } from "./jfast.js";
import { pgBossSubject } from "./pg-boss.js";
import { onPrivateRedis } from "../lib/private-redis.js";

/** The rows with persistence: a private redis-server per run with `--appendonly yes --appendfsync everysec`. */
const AOF = "AOF everysec";

export const SUBJECTS: Record<string, () => Subject> = {
  "jfast-postgres": () => jfastSubject("postgres", { keepCompleted: false }),
  "jfast-postgres-kept": () => jfastSubject("postgres"),
  "jfast-postgres-sync": () => jfastSubject("postgres", { keepCompleted: false, durableClaims: true }),
  "graphile-worker": graphileSubject,
  "pg-boss": pgBossSubject,
  "jfast-redis": () => jfastSubject("redis", { keepCompleted: false }),
  "jfast-postgres-limited": () => jfastSubject("postgres", { keepCompleted: false, limited: true }),
  "jfast-redis-limited": () => jfastSubject("redis", { keepCompleted: false, limited: true }),
  "jfast-redis-aof": () => onPrivateRedis((url) => jfastSubject("redis", { keepCompleted: false, redis: { url, label: AOF } })),
  bullmq: () => bullmqSubject(),
  "bullmq-aof": () => onPrivateRedis((url) => bullmqSubject({ redis: { url, label: AOF } })),
  "jfast-rabbitmq": () => jfastSubject("rabbitmq"),
  amqplib: () => amqplibSubject(),
  "amqplib-prefetch": () => amqplibSubject({ prefetch: 1000 }),
};
