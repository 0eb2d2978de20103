/**
 * Where a bulk enqueue's CPU goes: the client process's CPU time and the server's (read from /proc for the
 * server's process), per 1 000 jobs, for the subjects named, each in turn, ENQUEUE_ROUNDS times.
 *
 *   npx tsx enqueue-cpu.ts jfast-rabbitmq amqplib amqplib-priority      (ENQUEUE_JOBS=20000, ENQUEUE_ROUNDS=3)
 *
 * The server is found by its process name: beam.smp for RabbitMQ, redis-server for Redis, postgres for
 * PostgreSQL (every process of that name added: PostgreSQL runs one per connection). Linux only.
 */
import { SUBJECTS } from "./subjects/index.js";
import { median } from "./lib/stats.js";
import { serverCpuMs } from "./lib/server-cpu.js";
import { singleProcess } from "./lib/subject.js";

const JOBS = Number(process.env.ENQUEUE_JOBS ?? 20_000);
const ROUNDS = Number(process.env.ENQUEUE_ROUNDS ?? 3);
const names = process.argv.slice(2);
if (names.length === 0) throw new Error("name one subject or more: npx tsx enqueue-cpu.ts jfast-rabbitmq amqplib");

function serverName(subject: string): string {
  if (subject.includes("rabbitmq") || subject.startsWith("amqplib")) return "beam.smp";
  if (subject.includes("redis") || subject.startsWith("bullmq")) return "redis-server";
  return "postgres";
}

const rows = new Map<string, { client: number[]; server: number[]; rate: number[] }>();
for (let round = 1; round <= ROUNDS; round++) {
  for (const name of names) {
    const factory = SUBJECTS[name];
    if (!factory) throw new Error(`no bench subject named "${name}"; known: ${Object.keys(SUBJECTS).join(", ")}`);
    const subject = factory(singleProcess());
    await subject.setup();
    try {
      const comm = serverName(name);
      const server0 = await serverCpuMs(comm);
      const client0 = process.cpuUsage();
      const t0 = performance.now();
      await subject.enqueue(JOBS);
      const seconds = (performance.now() - t0) / 1000;
      const client = process.cpuUsage(client0);
      const server = (await serverCpuMs(comm)) - server0;
      const row = rows.get(name) ?? { client: [], server: [], rate: [] };
      row.client.push((client.user + client.system) / 1000 / (JOBS / 1000));
      row.server.push(server / (JOBS / 1000));
      row.rate.push(JOBS / seconds);
      rows.set(name, row);
    } finally {
      await subject.teardown();
    }
  }
}
console.log(`${JOBS} jobs enqueued in bulk, median of ${ROUNDS} rounds (Node ${process.versions.node}):`);
console.log("subject".padEnd(22), "jobs/s".padStart(8), "client CPU ms/1k".padStart(18), "server CPU ms/1k".padStart(18));
for (const [name, row] of rows) {
  console.log(name.padEnd(22), median(row.rate).toFixed(0).padStart(8), median(row.client).toFixed(1).padStart(18), median(row.server).toFixed(1).padStart(18));
}
process.exit(0);
