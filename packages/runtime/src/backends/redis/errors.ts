import { BackendError, JfastError } from "../../errors/jfast-error.js";

const DOCS = "jfast docs redis";

/** Driver errors that mean "Redis is not reachable right now" rather than "Redis refused this command". */
const UNAVAILABLE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries|LOADING|MASTERDOWN|CLUSTERDOWN/i;

/** Translates an ioredis error into a BackendError at the backend boundary; our own errors pass through. */
export function translateRedisError(error: unknown, params: { operation: string; url: string; queue: string }): JfastError {
  if (error instanceof JfastError) return error;
  const text = error instanceof Error ? error.message : String(error);
  const where = redactUrl(params.url);
  if (UNAVAILABLE.test(text) || (error instanceof Error && error.name === "MaxRetriesPerRequestError")) {
    return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: Redis at ${where} is unreachable (${text})`, {
      code: "BACKEND_UNAVAILABLE",
      hint: `start Redis or fix the address: [plugin.queue] url in jfast.toml, or REDIS_URL (now ${where})`,
      docs: DOCS,
      cause: error,
    });
  }
  if (/^NOREPLICAS/.test(text)) {
    return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: ${text}; the write is on the primary but may be lost if it fails now`, {
      code: "BACKEND_NOT_REPLICATED",
      hint: "check the replicas of the node serving the queue (INFO replication), or lower [plugin.queue] wait_replicas",
      docs: `${DOCS}#wait-replicas`,
      cause: error,
    });
  }
  if (/CROSSSLOT|do not hash to the same slot|non local key/i.test(text)) {
    return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: a command touched keys in more than one Cluster slot (${text})`, {
      code: "BACKEND_ERROR",
      hint: "every key of a queue carries its hash tag; this is a bug in jfast, please report it",
      docs: `${DOCS}#cluster`,
      cause: error,
    });
  }
  if (/NOAUTH|WRONGPASS|NOPERM/i.test(text)) {
    return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: Redis at ${where} refused the credentials (${text})`, {
      code: "BACKEND_AUTH",
      hint: "put the right user and password in the URL: redis://user:password@host:6379/0",
      docs: DOCS,
      cause: error,
    });
  }
  if (/WRONGTYPE/i.test(text)) {
    return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: a key under {${params.queue}} holds data of another kind (${text})`, {
      code: "BACKEND_KEY_CLASH",
      hint: `another program writes keys with the hash tag {${params.queue}}; give this queue its own [plugin.queue] name`,
      docs: `${DOCS}#keys`,
      cause: error,
    });
  }
  return new BackendError(`the Redis queue "${params.queue}" could not ${params.operation}: ${text}`, {
    code: "BACKEND_ERROR",
    hint: "this is Redis refusing a command; check the server log and that it runs Redis 6.2 or newer",
    docs: DOCS,
    cause: error,
  });
}

/** The URL (or each of a Cluster's comma-separated seed URLs) without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.split(",").map((entry) => {
    try {
      const parsed = new URL(entry.trim());
      if (parsed.password) parsed.password = "***";
      return parsed.toString();
    } catch {
      return "(an unparsable URL)";
    }
  }).join(",");
}
