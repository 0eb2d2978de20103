import type { z } from "zod";
import { ConfigError } from "../errors/jfast-error.js";
import { PLUGIN_NAMES } from "./schema.js";

/** Every problem the schema found, one line each, named by section and key. */
export function configIssue(file: string, error: z.ZodError): ConfigError {
  const lines = error.issues.map((issue) => {
    const key = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.join(", ");
      return `${key ? `${key}: ` : ""}unknown key${issue.keys.length > 1 ? "s" : ""} ${keys} — remove ${issue.keys.length > 1 ? "them" : "it"} or fix the spelling`;
    }
    // A key declared `never` is one that belongs elsewhere (another backend's); its message says where.
    if (issue.code === "invalid_type" && issue.expected === "never") return `${key} ${issue.message}`;
    if (issue.path[0] === "queues" && issue.code === "invalid_key") {
      return `${key}: not a queue name — a queue name is lower-case letters, digits, "_" and "-", starting with a letter (at most 40), e.g. [queues.media]`;
    }
    if (issue.path[0] === "plugins" && issue.path[1] === "enabled" && issue.code === "invalid_value") {
      return `${key}: ${issue.message} — known plugins are ${PLUGIN_NAMES.join(", ")}`;
    }
    return `${key}: ${issue.message}`;
  });
  return new ConfigError(`${file} is invalid:\n  - ${lines.join("\n  - ")}`, {
    code: "CONFIG_INVALID",
    hint: "correct the keys listed above; every key is described in the configuration page",
    docs: "jfast docs configuration",
  });
}

function formatPath(pathParts: readonly PropertyKey[]): string {
  if (pathParts.length === 0) return "(top level)";
  const [first, second, ...rest] = pathParts.map(String);
  if ((first === "plugin" || first === "queues") && second !== undefined) {
    return `[${first}.${second}]${rest.length ? ` ${rest.join(".")}` : ""}`;
  }
  return `[${first}]${second !== undefined ? ` ${[second, ...rest].join(".")}` : ""}`;
}
