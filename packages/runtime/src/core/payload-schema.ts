import { JfastError } from "../errors/jfast-error.js";
import { PermanentError } from "../errors/permanent-error.js";

/**
 * Standard Schema (standardschema.dev), the interface zod (3.24+, 4), valibot (1.0+) and arktype (2.0+) schemas
 * all carry under `~standard`: a task declared with `schema` checks its payloads at enqueue and before its
 * handler runs (docs/tasks.md#payload-schemas), whatever library made the schema. Declared here as the
 * specification words it, so the runtime depends on none of them.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

export type StandardResult<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The payload type a schema gives the handler. */
export type SchemaOutput<S> = S extends { readonly "~standard": { readonly types?: { readonly output: infer O } | undefined } } ? O : unknown;

/** The payload type a schema takes: what `task.job(payload)` takes. */
export type SchemaInput<S> = S extends { readonly "~standard": { readonly types?: { readonly input: infer I } | undefined } } ? I : unknown;

/** One bad field of a payload: where (`order.lines.0.sku`, or "(payload)" for the whole) and why. */
export interface PayloadIssue {
  path: string;
  message: string;
}

/** The payload as the schema outputs it, or the issues that refuse it. */
export async function checkPayload(schema: StandardSchemaV1, payload: unknown): Promise<{ ok: true; value: unknown } | { ok: false; issues: PayloadIssue[] }> {
  const result = await schema["~standard"].validate(payload);
  if (result.issues === undefined) return { ok: true, value: result.value };
  return { ok: false, issues: result.issues.map((issue) => ({ path: issuePath(issue), message: issue.message })) };
}

function issuePath(issue: StandardIssue): string {
  if (!issue.path || issue.path.length === 0) return "(payload)";
  return issue.path.map((part) => String(typeof part === "object" && part !== null ? part.key : part)).join(".");
}

function describeIssues(issues: readonly PayloadIssue[]): string {
  const shown = issues.slice(0, 10).map((i) => `${i.path}: ${i.message}`);
  if (issues.length > shown.length) shown.push(`… and ${issues.length - shown.length} more`);
  return shown.join("; ");
}

/** An enqueue refused (code PAYLOAD_INVALID): nothing was written. `issues` has each bad field's path and reason. */
export class PayloadRefused extends JfastError {
  readonly task: string;
  readonly issues: readonly PayloadIssue[];

  constructor(task: string, issues: readonly PayloadIssue[]) {
    super(`the payload of a "${task}" job does not fit its task's schema: ${describeIssues(issues)}`, {
      code: "PAYLOAD_INVALID",
      hint: "fix the payload where the schema says, or change the task's schema; nothing was enqueued",
      docs: "jfast docs tasks#payload-schemas",
    });
    this.task = task;
    this.issues = issues;
  }
}

/**
 * A stored job whose payload no longer fits its task's schema (a job enqueued before a deploy changed it): it can
 * never succeed, so it is dead-lettered at once with the issues, without spending its retries.
 */
export class PayloadInvalidError extends PermanentError {
  readonly issues: readonly PayloadIssue[];

  constructor(task: string, issues: readonly PayloadIssue[]) {
    super(`the stored payload no longer fits the schema of "${task}": ${describeIssues(issues)} (docs/tasks.md#payload-schemas)`);
    this.issues = issues;
  }
}
