import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Runs rabbitmqctl (against the shared node unless `node` names another) and parses its JSON output. */
export async function rabbitmqctlJson<T>(args: string[], node?: string): Promise<T> {
  const { stdout } = await run("rabbitmqctl", [...(node ? ["-n", node] : []), "-q", "--formatter", "json", ...args], { timeout: 60_000 });
  return JSON.parse(stdout) as T;
}

export async function rabbitmqctl(args: string[], node?: string): Promise<string> {
  const { stdout } = await run("rabbitmqctl", [...(node ? ["-n", node] : []), ...args], { timeout: 120_000 });
  return stdout;
}

export interface ListedQueue {
  name: string;
  /** [key, AMQP type, value] triples, as rabbitmqctl prints them. */
  arguments: Array<[string, string, unknown]>;
  messages: number;
  durable: boolean;
}

export interface ListedBinding {
  source_name: string;
  source_kind: "exchange";
  destination_name: string;
  destination_kind: "queue" | "exchange";
  routing_key: string;
}

export async function listQueues(prefix: string): Promise<ListedQueue[]> {
  const all = await rabbitmqctlJson<ListedQueue[]>(["list_queues", "name", "arguments", "messages", "durable"]);
  return all.filter((q) => q.name.startsWith(prefix));
}

export async function listBindings(prefix: string): Promise<ListedBinding[]> {
  const all = await rabbitmqctlJson<ListedBinding[]>(["list_bindings", "source_name", "source_kind", "destination_name", "destination_kind", "routing_key"]);
  return all.filter((b) => b.source_name.startsWith(prefix));
}

export function argumentsOf(queue: ListedQueue): Record<string, unknown> {
  return Object.fromEntries(queue.arguments.map(([key, , value]) => [key, value]));
}
