/** Every subject `npm run bench` knows, by the name BENCH_ONLY and run-subject.ts take. */
import type { Subject } from "../lib/subject.js";
import { amqplibSubject } from "./amqplib.js";
import { bullmqSubject } from "./bullmq.js";
import { graphileSubject } from "./graphile-worker.js";
import { jfastSubject } from "./jfast.js";
import { pgBossSubject } from "./pg-boss.js";

export const SUBJECTS: Record<string, () => Subject> = {
  "jfast-postgres": () => jfastSubject("postgres", { keepCompleted: false }),
  "jfast-postgres-kept": () => jfastSubject("postgres"),
  "graphile-worker": graphileSubject,
  "pg-boss": pgBossSubject,
  "jfast-redis": () => jfastSubject("redis", { keepCompleted: false }),
  "jfast-postgres-limited": () => jfastSubject("postgres", { keepCompleted: false, limited: true }),
  "jfast-redis-limited": () => jfastSubject("redis", { keepCompleted: false, limited: true }),
  bullmq: bullmqSubject,
  "jfast-rabbitmq": () => jfastSubject("rabbitmq"),
  amqplib: () => amqplibSubject(),
  "amqplib-prefetch": () => amqplibSubject({ prefetch: 1000 }),
};
