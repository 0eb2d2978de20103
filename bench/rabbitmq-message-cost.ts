/**
 * What each part of a job's message costs the RabbitMQ broker: raw amqplib publishing N persistent messages with
 * confirms, once plain and once per addition jfast's messages carry (a full job body, the message-id, type and
 * timestamp properties, the mandatory flag, a priority queue), and once with all of them as jfast publishes a
 * job; the broker's CPU time (beam.smp, from /proc) and the client's per 1 000 messages, two rounds.
 *
 *   npx tsx rabbitmq-message-cost.ts [variant ...]        (ROUNDS=2, AMQP_URL; Linux only; every beam.smp on the machine
 *   is counted, so run it with no other RabbitMQ node busy)
 */
import amqp from "amqplib";
import { serverCpuMs } from "./lib/server-cpu.js";
import { services } from "./lib/subject.js";
const beam = () => serverCpuMs("beam.smp");
const N = 20000;
const conn = await amqp.connect(services.amqp);
const ch = await conn.createConfirmChannel();
const small = Buffer.from(JSON.stringify({ task: "bench.noop", payload: {} }));
const big = Buffer.from(JSON.stringify({ id: "0193a8f2-8c1e-7d3b-9a4f-6e2b1c0d9e8f", task: "bench.noop", payload: {}, queue: "bench.abcdef12", attempts: 0, maxAttempts: 3, priority: 0, availableAt: new Date().toISOString(), createdAt: new Date().toISOString(), errors: [], timeoutMs: 60000 }));
const compact = Buffer.from(JSON.stringify({ payload: {} }));
const id = (i: number) => `0193a8f2-8c1e-7d3b-9a4f-${String(i).padStart(12, "0")}`;
const variants: Record<string, { args?: object; body: Buffer; opts: (i: number) => object }> = {
  raw: { body: small, opts: () => ({ persistent: true, contentType: "application/json" }) },
  "raw+bigbody": { body: big, opts: () => ({ persistent: true, contentType: "application/json" }) },
  "raw+props": { body: small, opts: (i) => ({ persistent: true, contentType: "application/json", messageId: `0193a8f2-8c1e-7d3b-9a4f-${String(i).padStart(12, "0")}`, type: "bench.noop", timestamp: Math.floor(Date.now() / 1000) }) },
  "raw+mandatory": { body: small, opts: () => ({ persistent: true, contentType: "application/json", mandatory: true }) },
  "raw+priorityq": { args: { "x-max-priority": 9 }, body: small, opts: () => ({ persistent: true, contentType: "application/json", priority: 9 }) },
  "jfast-like": { args: { "x-max-priority": 9 }, body: big, opts: (i) => ({ persistent: true, mandatory: true, contentType: "application/json", messageId: `0193a8f2-8c1e-7d3b-9a4f-${String(i).padStart(12, "0")}`, type: "bench.noop", timestamp: Math.floor(Date.now() / 1000), priority: 9 }) },
  // A new job's message as jfast publishes it today (a compact body: payload only), and that message with one
  // part taken away at a time (no-props: without message-id, type, timestamp and content-type): what each would
  // save the broker.
  "jfast-now": { args: { "x-max-priority": 9 }, body: compact, opts: (i) => ({ persistent: true, mandatory: true, contentType: "application/json", messageId: id(i), type: "bench.noop", timestamp: Math.floor(Date.now() / 1000), priority: 4 }) },
  "jfast-now-no-timestamp": { args: { "x-max-priority": 9 }, body: compact, opts: (i) => ({ persistent: true, mandatory: true, contentType: "application/json", messageId: id(i), type: "bench.noop", priority: 4 }) },
  "jfast-now-no-contenttype": { args: { "x-max-priority": 9 }, body: compact, opts: (i) => ({ persistent: true, mandatory: true, messageId: id(i), type: "bench.noop", timestamp: Math.floor(Date.now() / 1000), priority: 4 }) },
  "jfast-now-no-props": { args: { "x-max-priority": 9 }, body: compact, opts: () => ({ persistent: true, mandatory: true, priority: 4 }) },
  "jfast-now-no-mandatory": { args: { "x-max-priority": 9 }, body: compact, opts: (i) => ({ persistent: true, contentType: "application/json", messageId: id(i), type: "bench.noop", timestamp: Math.floor(Date.now() / 1000), priority: 4 }) },
};
const order = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(variants);
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) for (const name of order) {
  const v = variants[name]!;
  const q = `amqpvar.${name}.${round}`;
  await ch.assertQueue(q, { durable: true, ...(v.args ? { arguments: v.args } : {}) });
  const b0 = await beam(); const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < N; i++) { ch.sendToQueue(q, v.body, v.opts(i)); if ((i + 1) % 1000 === 0) await ch.waitForConfirms(); }
  await ch.waitForConfirms();
  const s = (performance.now() - t0) / 1000; const c = process.cpuUsage(c0); const b = (await beam()) - b0;
  console.log(name.padEnd(16), (N / s).toFixed(0).padStart(7), "jobs/s  client", ((c.user + c.system) / 1000 / (N / 1000)).toFixed(1).padStart(6), "ms/1k  broker", (b / (N / 1000)).toFixed(1).padStart(6), "ms/1k");
  await ch.deleteQueue(q);
}
await conn.close();
