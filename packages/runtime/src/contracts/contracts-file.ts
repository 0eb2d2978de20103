import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import { JfastError } from "../errors/jfast-error.js";
import type { ContractsFile } from "./types.js";

const MODULE_NAME = /^[a-z0-9_]+$/;
const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;
const SERVICE_NAME = /^[a-z0-9][a-z0-9_-]*$/;
const TASK_NAME = /^[a-z0-9_]+(\.[a-zA-Z0-9_-]+)+$/;

const moduleSchema = z.strictObject({
  publishes: z.array(z.string().regex(EVENT_TYPE, 'an event type such as "receipt.registered"')).default([]),
  depends_on: z.array(z.string().regex(MODULE_NAME, "a module name (a directory under modules/)")).default([]),
  description: z.string().optional(),
});

const serviceSchema = z.strictObject({
  tasks: z.array(z.string().regex(TASK_NAME, 'a task name such as "shipment.create"')).default([]),
  description: z.string().optional(),
});

const fileSchema = z.strictObject({
  modules: z.record(z.string().regex(MODULE_NAME, "a module name (a directory under modules/)"), moduleSchema).default({}),
  services: z.record(z.string().regex(SERVICE_NAME, "a service name"), serviceSchema).default({}),
});

/** contracts.toml cannot be read or is not what the checker expects; `jfast contracts` exits 2. */
export class ContractsFileError extends JfastError {
  constructor(message: string, cause?: unknown) {
    super(message, {
      code: "CONTRACTS_INVALID",
      hint: 'each module is a [modules.<name>] table with publishes = ["<event.type>", ...] and depends_on = ["<module>", ...]; another service whose tasks this one enqueues is a [services.<name>] table with tasks = ["<task>", ...]',
      docs: "jfast docs contracts#contractstoml",
      cause,
    });
    this.name = "ContractsFileError";
  }
}

/** Reads `<root>/contracts.toml`. A missing file is an empty contract (every published event is then undeclared). */
export async function loadContractsFile(root: string): Promise<ContractsFile> {
  const file = path.join(root, "contracts.toml");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return { path: file, exists: false, modules: {}, services: {} };
    throw new ContractsFileError(`cannot read ${file}: ${(cause as Error).message}`, cause);
  }
  return parseContracts(file, text);
}

export function parseContracts(file: string, text: string): ContractsFile {
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (cause) {
    throw new ContractsFileError(`${file} is not valid TOML: ${(cause as Error).message}`, cause);
  }
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issueText(issue)}`);
    throw new ContractsFileError(`${file} is invalid:\n  - ${lines.join("\n  - ")}`);
  }
  const modules: ContractsFile["modules"] = {};
  for (const [name, entry] of Object.entries(parsed.data.modules)) {
    modules[name] = {
      publishes: [...new Set(entry.publishes)],
      dependsOn: [...new Set(entry.depends_on)],
      description: entry.description ?? null,
    };
  }
  const services: ContractsFile["services"] = {};
  for (const [name, entry] of Object.entries(parsed.data.services)) {
    services[name] = { tasks: [...new Set(entry.tasks)], description: entry.description ?? null };
  }
  return { path: file, exists: true, modules, services };
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    const takes =
      issue.path[0] === "services" ? "a service takes tasks and description" : issue.path.length === 0 ? "the file takes [modules.<name>] and [services.<name>] tables" : "a module takes publishes, depends_on and description";
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")} (${takes})`;
  }
  return issue.message;
}

/** `[modules.receipt] publishes[0]` rather than zod's `modules.receipt.publishes.0` (same for `[services.x]`). */
function formatPath(parts: readonly PropertyKey[]): string {
  if (parts.length === 0) return "(top level)";
  const [first, second, key, ...rest] = parts.map(String);
  if ((first !== "modules" && first !== "services") || second === undefined) return parts.map(String).join(".");
  const table = `[${first}.${second}]`;
  if (key === undefined) return table;
  return `${table} ${key}${rest.map((r) => (/^\d+$/.test(r) ? `[${r}]` : `.${r}`)).join("")}`;
}
