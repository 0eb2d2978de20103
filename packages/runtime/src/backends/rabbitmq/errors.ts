import { BackendError, JfastError } from "../../errors/jfast-error.js";

export const DOCS = "jfast docs rabbitmq";

/** Driver errors that mean "the broker is not reachable right now" rather than "the broker refused this". */
const UNAVAILABLE =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|Connection closed|Channel closed|Channel ended|CONNECTION_FORCED|Socket closed|socket hang up/i;

/** AMQP reply codes we branch on (amqplib puts them on `error.code`). */
export const ReplyCode = {
  notFound: 404,
  preconditionFailed: 406,
  accessRefused: 403,
} as const;

/** The broker turned the connection's login down (a wrong user or password), as opposed to a refused operation. */
export function isLoginRefused(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /Handshake terminated by server: 403|ACCESS_REFUSED - Login was refused|PLAIN login refused/i.test(text);
}

export function replyCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

interface Where {
  operation: string;
  url: string;
  queue: string;
}

/** Translates an amqplib error into a BackendError at the backend boundary; our own errors pass through. */
export function translateAmqpError(error: unknown, where: Where): JfastError {
  if (error instanceof JfastError) return error;
  const text = error instanceof Error ? error.message : String(error);
  const url = redactUrl(where.url);
  const code = replyCode(error);
  if (isLoginRefused(error)) {
    return new BackendError(
      `the RabbitMQ queue "${where.queue}" could not ${where.operation}: the broker at ${url} refused the login with ACCESS_REFUSED (wrong user name or password)`,
      {
        code: "BACKEND_AUTH",
        hint: `fix the user and password in AMQP_URL or [plugin.queue] url (now ${url}); \`rabbitmqctl authenticate_user <user> <password>\` checks them on the broker`,
        docs: DOCS,
        cause: error,
      },
    );
  }
  if (/ACCESS_REFUSED|403|authentication|PLAIN login refused/i.test(text) || code === ReplyCode.accessRefused) {
    return new BackendError(`the RabbitMQ queue "${where.queue}" could not ${where.operation}: the broker at ${url} refused the credentials or permissions (${text})`, {
      code: "BACKEND_AUTH",
      hint: "put a user with configure/write/read rights on the vhost in the URL: amqp://user:password@host:5672/vhost",
      docs: DOCS,
      cause: error,
    });
  }
  if (code === ReplyCode.notFound) {
    return new BackendError(`the RabbitMQ queue "${where.queue}" could not ${where.operation}: part of its topology is missing on the broker (${text})`, {
      code: "BACKEND_TOPOLOGY_MISSING",
      hint: "start the service once (jfast.start() declares the queues and exchanges), or restore what was deleted on the broker",
      docs: `${DOCS}#names`,
      cause: error,
    });
  }
  if (UNAVAILABLE.test(text)) {
    return new BackendError(`the RabbitMQ queue "${where.queue}" could not ${where.operation}: the broker at ${url} is unreachable (${text})`, {
      code: "BACKEND_UNAVAILABLE",
      hint: `start RabbitMQ or fix the address: [plugin.queue] url in jfast.toml, or AMQP_URL (now ${url})`,
      docs: DOCS,
      cause: error,
    });
  }
  return new BackendError(`the RabbitMQ queue "${where.queue}" could not ${where.operation}: ${text}`, {
    code: "BACKEND_ERROR",
    hint: "this is RabbitMQ refusing an operation; check the broker log",
    docs: DOCS,
    cause: error,
  });
}

/**
 * The broker refused to redeclare part of the cascade with other arguments: it was declared with another unit
 * (every level's TTL differs) or another level count (level 0's dead-letter key differs). RabbitMQ never
 * changes a declared queue's arguments, so the only way forward is another queue name.
 */
export function topologyMismatch(error: unknown, params: { queue: string; unitMs: number; levels: number }): JfastError {
  const text = error instanceof Error ? error.message : String(error);
  return new BackendError(
    `the RabbitMQ broker already holds queue "${params.queue}" with a different delay cascade than this configuration (${params.levels} levels of ${params.unitMs} ms): ${text}`,
    {
      code: "RABBITMQ_TOPOLOGY_MISMATCH",
      hint:
        `the delay unit and the number of levels are part of the broker topology and cannot change under the same name; ` +
        `give the queue another name ([plugin.queue] name), or drain "${params.queue}", "${params.queue}.dead" and "${params.queue}.delay.*" and delete them first`,
      docs: `${DOCS}#changing-the-cascade`,
      cause: error,
    },
  );
}

/**
 * The broker refused to redeclare the work queue as a priority queue (x-max-priority): it was declared without
 * one, by a version of jfast before job priorities or by hand. RabbitMQ never changes a declared queue's
 * arguments, so the queue must be recreated or another name used.
 */
export function workQueueMismatch(error: unknown, params: { queue: string }): JfastError {
  const text = error instanceof Error ? error.message : String(error);
  return new BackendError(
    `the RabbitMQ broker already holds the work queue "${params.queue}" declared without the priority this version needs (x-max-priority 9): ${text}`,
    {
      code: "RABBITMQ_TOPOLOGY_MISMATCH",
      hint:
        `job priorities need "${params.queue}" to be a priority queue, which RabbitMQ cannot change on an existing queue; ` +
        `stop the workers, let "${params.queue}" drain, delete it (\`rabbitmqctl delete_queue ${params.queue}\`) and start again, ` +
        `or give the queue another name ([plugin.queue] name)`,
      docs: `${DOCS}#priority-queue`,
      cause: error,
    },
  );
}

/**
 * The broker holds the queue as the other type (classic vs quorum). RabbitMQ cannot convert a queue in place:
 * the way over is a new queue name, with the old queue drained by a worker still configured with its type.
 */
export function queueTypeMismatch(error: unknown, params: { queue: string; type: string }): JfastError {
  const text = error instanceof Error ? error.message : String(error);
  const other = params.type === "quorum" ? "classic" : "quorum";
  return new BackendError(
    `the RabbitMQ broker already holds queue "${params.queue}" as a ${other} queue, but this configuration declares it ${params.type} ([plugin.queue] queue_type): ${text}`,
    {
      code: "RABBITMQ_TOPOLOGY_MISMATCH",
      hint:
        `RabbitMQ cannot change a queue's type; to move to ${params.type}, give the queue a new name ([plugin.queue] name) with queue_type = "${params.type}", ` +
        `keep one worker with queue_type = "${other}" on "${params.queue}" until it and its delay levels are empty, then delete "${params.queue}", "${params.queue}.dead" and "${params.queue}.delay.*"; ` +
        `or set queue_type = "${other}" to keep using it`,
      docs: `${DOCS}#moving-to-quorum-queues`,
      cause: error,
    },
  );
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable URL)";
  }
}
