import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import kafkajs from "kafkajs";
import type { Admin } from "kafkajs";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { EventsBus } from "../../src/kafka/events-bus.js";
import type { EventHandlerDefinition } from "../../src/kafka/on.js";
import { createLogger } from "../../src/observability/logger.js";

/**
 * The Kafka suites talk to the real broker that docker/kafka/start.sh runs on 127.0.0.1:9092 (CI starts it
 * before the tests). Each test isolates itself with its own topics and consumer groups.
 */
export const BROKER = "127.0.0.1:9092";
export const REPO_ROOT = path.resolve(import.meta.dirname, "../../../..");

/** Fails the suite loudly, with the command that fixes it, when no broker listens. */
export async function requireBroker(): Promise<void> {
  const [host, port] = BROKER.split(":") as [string, string];
  const open = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    socket.setTimeout(2000);
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
  if (!open) {
    throw new Error(`Kafka is not running on ${BROKER}: start it with \`bash docker/kafka/start.sh\` (from the repository root)`);
  }
}

export function uniqueName(prefix: string): string {
  return `${prefix}.${randomUUID().slice(0, 8)}`;
}

export interface TestService {
  jfast: Jfast;
  events: EventsBus;
  logs: Record<string, unknown>[];
  root: string;
}

/** An app with the kafka plugin on, in a temporary root, with log lines captured for assertions. */
export async function startService(params: {
  name: string;
  group: string;
  handlers?: EventHandlerDefinition[];
  brokers?: string;
  env?: NodeJS.ProcessEnv;
  providers?: Record<string, unknown>;
  root?: string;
}): Promise<TestService> {
  const root = params.root ?? (await mkdtemp(path.join(tmpdir(), "jfast-kafka-")));
  if (!params.root) {
    await writeFile(
      path.join(root, "jfast.toml"),
      `[service]\nname = "${params.name}"\n\n[plugins]\nenabled = ["kafka"]\n\n[plugin.kafka]\nbootstrap_servers = "${params.brokers ?? BROKER}"\nconsumer_group = "${params.group}"\n`,
    );
  }
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ service: params.name, level: "debug", write: (line) => logs.push(JSON.parse(line)) });
  const jfast = await createJfast({
    root,
    env: params.env ?? {},
    logger,
    ...(params.handlers ? { handlers: params.handlers } : {}),
    ...(params.providers ? { providers: params.providers } : {}),
    ...(params.root ? { config: { plugin: { kafka: { consumer_group: params.group, bootstrap_servers: params.brokers ?? BROKER } } } } : {}),
  });
  await jfast.start();
  return { jfast, events: jfast.require<EventsBus>("events"), logs, root };
}

/** Tracks what a test opened so afterEach closes all of it, even after a failed assertion. */
export function createCleanup() {
  const tasks: (() => Promise<unknown>)[] = [];
  return {
    add(fn: () => Promise<unknown>) {
      tasks.push(fn);
    },
    service(service: TestService, ownsRoot = true) {
      tasks.push(() => service.jfast.stop());
      if (ownsRoot) tasks.push(() => rm(service.root, { recursive: true, force: true }));
      return service;
    },
    async run() {
      const errors: unknown[] = [];
      for (const task of tasks.splice(0).reverse()) {
        try {
          await task();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) throw errors[0];
    },
  };
}

/** An admin client on the shared broker, to read committed offsets the way an operator would. */
export async function connectAdmin(brokers = BROKER): Promise<Admin> {
  const admin = new kafkajs.Kafka({ clientId: "jfast-tests", brokers: [brokers], logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  return admin;
}

export async function committedOffset(admin: Admin, group: string, topic: string, partition: number): Promise<string> {
  const [entry] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return entry?.partitions.find((p) => p.partition === partition)?.offset ?? "-1";
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
