/** Every subject `npm run bench` knows, by the name BENCH_ONLY and run-subject.ts take. */
import type { Subject, SubjectContext } from "../lib/subject.js";
import { amqplibSubject } from "./amqplib.js";
import { bullmqSubject } from "./bullmq.js";
import { graphileSubject } from "./graphile-worker.js";
import { jfastSubject } from "./jfast.js";
import { pgBossSubject } from "./pg-boss.js";
import { onPrivateRedis } from "../lib/private-redis.js";

/** The rows with persistence: a private redis-server per run with `--appendonly yes --appendfsync everysec`. */
const AOF = "AOF everysec";

/**
 * Each subject made for a context: a single-process run, or one half of a separate-process run (`<subject>/split`
 * in run-subject.ts, for the subjects in SPLIT).
 */
export const SUBJECTS: Record<string, (context: SubjectContext) => Subject> = {
  "jfast-postgres": (c) => jfastSubject("postgres", { keepCompleted: false }, c),
  "jfast-postgres-kept": (c) => jfastSubject("postgres", {}, c),
  "jfast-postgres-sync": (c) => jfastSubject("postgres", { keepCompleted: false, durableClaims: true }, c),
  "graphile-worker": (c) => graphileSubject(c),
  "pg-boss": (c) => pgBossSubject(c),
  "jfast-redis": (c) => jfastSubject("redis", { keepCompleted: false }, c),
  "jfast-postgres-limited": (c) => jfastSubject("postgres", { keepCompleted: false, limited: true }, c),
  "jfast-redis-limited": (c) => jfastSubject("redis", { keepCompleted: false, limited: true }, c),
  "jfast-redis-aof": (c) => onPrivateRedis((url) => jfastSubject("redis", { keepCompleted: false, redis: { url, label: AOF } }, c)),
  bullmq: (c) => bullmqSubject({}, c),
  "bullmq-aof": (c) => onPrivateRedis((url) => bullmqSubject({ redis: { url, label: AOF } }, c)),
  "jfast-rabbitmq": (c) => jfastSubject("rabbitmq", {}, c),
  amqplib: (c) => amqplibSubject({}, c),
  "amqplib-prefetch": (c) => amqplibSubject({ prefetch: 1000 }, c),
  "amqplib-priority": (c) => amqplibSubject({ priority: true }, c),
  /** Not in the bench's run: the broker's cost of a priority queue at jfast's push-ahead (cpu-per-job.ts, run-subject.ts …/split). */
  "amqplib-priority-prefetch": (c) => amqplibSubject({ priority: true, prefetch: 1000 }, c),
};

/**
 * The subjects that also run with their producer and their worker in separate processes. The AOF rows do not:
 * their private redis-server lives in one process.
 */
export const SPLIT = new Set(["jfast-postgres", "graphile-worker", "pg-boss", "jfast-redis", "bullmq", "jfast-rabbitmq", "amqplib", "amqplib-prefetch", "amqplib-priority-prefetch"]);
