import type { StandardSchemaV1 } from "../core/payload-schema.js";

/** A JSON Schema as the schema libraries give it (draft 2020-12), read loosely. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * One task's payload schema as `jfast contracts diff` compares it: the JSON Schema of what the task accepts
 * (its input), or null when the library gives none (`vendor` says which library it was).
 */
export interface PayloadSchemaEntry {
  kind: "task" | "event";
  /** The task's name, or the event type for a subscriber's schema. */
  name: string;
  vendor: string;
  jsonSchema: JsonSchema | null;
}

/** One difference inside a payload schema: where (`order.lines[].sku`, "(payload)" for the whole) and what. */
export interface PayloadFieldChange {
  path: string;
  change: string;
  breaking: boolean;
}

/** What a change does to one task's payload schema: `payloads` in `jfast contracts diff --json`. */
export interface PayloadSchemaChange {
  kind: "task" | "event";
  name: string;
  change: "added" | "removed" | "changed";
  /** breaking: a payload the base accepted may be refused now (a field removed or newly required, a type narrowed). */
  class: "breaking" | "compatible";
  fields: PayloadFieldChange[];
}

/**
 * The JSON Schema of what a Standard Schema accepts: from its Standard JSON Schema interface (zod 4.2+, and any
 * library that implements `~standard.jsonSchema`), else read from valibot's own schema objects; null otherwise.
 */
export function payloadJsonSchema(schema: StandardSchemaV1): JsonSchema | null {
  const standard = schema["~standard"] as StandardSchemaV1["~standard"] & { jsonSchema?: { input?: (options: { target: string }) => unknown } };
  try {
    const input = standard.jsonSchema?.input?.({ target: "draft-2020-12" });
    if (input && typeof input === "object") return input as JsonSchema;
  } catch {
    // A schema the library cannot express in JSON Schema (a transform, a custom check): read it another way.
  }
  if (standard.vendor === "valibot") return fromValibot(schema as unknown as Valibot);
  return null;
}

interface Valibot {
  kind?: string;
  type?: string;
  entries?: Record<string, Valibot>;
  item?: Valibot;
  wrapped?: Valibot;
  options?: unknown[];
  literal?: unknown;
  pipe?: Valibot[];
  requirement?: unknown;
}

const VALIBOT_CHECKS: Record<string, string> = {
  min_length: "minLength",
  max_length: "maxLength",
  min_value: "minimum",
  max_value: "maximum",
  regex: "pattern",
  email: "format",
  url: "format",
  uuid: "format",
};

/** valibot's schema objects (type, entries, item, wrapped, options, pipe) as the JSON Schema they mean; null for what it cannot say. */
function fromValibot(schema: Valibot): JsonSchema | null {
  const base = ((): Record<string, unknown> | null => {
    switch (schema.type) {
      case "string":
      case "number":
      case "boolean":
      case "null":
        return { type: schema.type };
      case "bigint":
        return { type: "integer" };
      case "object":
      case "strict_object":
      case "loose_object": {
        const properties: Record<string, unknown> = {};
        const required: string[] = [];
        for (const [key, entry] of Object.entries(schema.entries ?? {})) {
          const optional = entry.type === "optional" || entry.type === "exact_optional" || entry.type === "nullish";
          const inner = optional ? (entry.type === "nullish" ? { anyOf: [fromValibot(entry.wrapped!) ?? {}, { type: "null" }] } : fromValibot(entry.wrapped!)) : fromValibot(entry);
          properties[key] = inner ?? {};
          if (!optional) required.push(key);
        }
        return { type: "object", properties, required, ...(schema.type === "strict_object" ? { additionalProperties: false } : {}) };
      }
      case "array":
        return { type: "array", items: fromValibot(schema.item!) ?? {} };
      case "nullable":
        return { anyOf: [fromValibot(schema.wrapped!) ?? {}, { type: "null" }] };
      case "picklist":
        return { enum: [...(schema.options ?? [])] };
      case "literal":
        return { const: schema.literal };
      case "union":
        return { anyOf: (schema.options as Valibot[]).map((o) => fromValibot(o) ?? {}) };
      case "any":
      case "unknown":
        return {};
      default:
        return null;
    }
  })();
  if (!base) return null;
  for (const action of schema.pipe ?? []) {
    const key = action.type ? VALIBOT_CHECKS[action.type] : undefined;
    if (!key) continue;
    base[key] = key === "format" ? action.type : key === "pattern" ? String((action.requirement as RegExp).source) : action.requirement;
  }
  return base;
}

/** Both sides' schemas, task by task (and event by event): what changed, classed breaking or compatible. */
export function diffPayloadSchemas(base: readonly PayloadSchemaEntry[], head: readonly PayloadSchemaEntry[]): PayloadSchemaChange[] {
  const key = (e: PayloadSchemaEntry) => `${e.kind}:${e.name}`;
  const before = new Map(base.map((e) => [key(e), e]));
  const after = new Map(head.map((e) => [key(e), e]));
  const out: PayloadSchemaChange[] = [];
  for (const [id, entry] of after) {
    const old = before.get(id);
    if (!old) {
      out.push({ kind: entry.kind, name: entry.name, change: "added", class: "compatible", fields: [{ path: "(payload)", change: "a new schema: payloads are checked from now on", breaking: false }] });
      continue;
    }
    const fields = compareSchemas(old, entry);
    if (fields.length > 0) out.push({ kind: entry.kind, name: entry.name, change: "changed", class: fields.some((f) => f.breaking) ? "breaking" : "compatible", fields });
  }
  for (const [id, entry] of before) {
    if (!after.has(id)) out.push({ kind: entry.kind, name: entry.name, change: "removed", class: "compatible", fields: [{ path: "(payload)", change: "the schema is gone: payloads are no longer checked", breaking: false }] });
  }
  return out.sort((a, b) => (a.class === b.class ? 0 : a.class === "breaking" ? -1 : 1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function compareSchemas(old: PayloadSchemaEntry, now: PayloadSchemaEntry): PayloadFieldChange[] {
  if (old.jsonSchema === null || now.jsonSchema === null) {
    if (old.vendor === now.vendor && old.jsonSchema === null && now.jsonSchema === null) return [];
    return [{ path: "(payload)", change: `the schema (${old.vendor} → ${now.vendor}) gives no JSON Schema to compare; review it by hand`, breaking: true }];
  }
  const out: PayloadFieldChange[] = [];
  compareNode(resolveRefs(old.jsonSchema), resolveRefs(now.jsonSchema), "", out);
  return out;
}

/** Inlines local `#/$defs/…` references one level at a time (a recursive schema stops at the second visit). */
function resolveRefs(root: JsonSchema): JsonSchema {
  const defs = (root.$defs ?? root.definitions ?? {}) as Record<string, JsonSchema>;
  const visit = (node: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n, seen));
    if (!node || typeof node !== "object") return node;
    const ref = (node as JsonSchema).$ref;
    if (typeof ref === "string" && /^#\/(\$defs|definitions)\//.test(ref)) {
      const name = ref.split("/").pop()!;
      if (seen.has(name) || !defs[name]) return { $ref: ref };
      return visit(defs[name], new Set([...seen, name]));
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) if (k !== "$defs" && k !== "definitions" && k !== "$schema") out[k] = visit(v, seen);
    return out;
  };
  return visit(root, new Set()) as JsonSchema;
}

const LOWER_BOUNDS = ["minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"];
const UPPER_BOUNDS = ["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"];
const EXACT = ["pattern", "format", "multipleOf"];

function label(path: string): string {
  return path === "" ? "(payload)" : path;
}

/** The JSON types a node accepts, or null when it is not a plain typed node (then it is compared as a whole). */
function typesOf(node: JsonSchema): Set<string> | null {
  if (typeof node.type === "string") return new Set([node.type === "integer" ? "integer" : node.type]);
  if (Array.isArray(node.type)) return new Set(node.type as string[]);
  const alternatives = (node.anyOf ?? node.oneOf) as JsonSchema[] | undefined;
  if (alternatives && alternatives.every((a) => typeof a.type === "string" && Object.keys(a).length === 1)) return new Set(alternatives.map((a) => a.type as string));
  return null;
}

/** With null allowed as an alternative ({ anyOf: [X, { type: "null" }] }): X, and whether null is allowed. */
function unwrapNullable(node: JsonSchema): { node: JsonSchema; nullable: boolean } {
  const alternatives = (node.anyOf ?? node.oneOf) as JsonSchema[] | undefined;
  if (alternatives?.length === 2) {
    const nullIndex = alternatives.findIndex((a) => a.type === "null" && Object.keys(a).length === 1);
    if (nullIndex >= 0) return { node: alternatives[1 - nullIndex]!, nullable: true };
  }
  return { node, nullable: false };
}

function compareNode(oldNode: JsonSchema, newNode: JsonSchema, path: string, out: PayloadFieldChange[]): void {
  const before = unwrapNullable(oldNode);
  const after = unwrapNullable(newNode);
  if (before.nullable && !after.nullable) out.push({ path: label(path), change: "null is no longer accepted", breaking: true });
  if (!before.nullable && after.nullable) out.push({ path: label(path), change: "null is accepted", breaking: false });
  const a = before.node;
  const b = after.node;
  const typesA = typesOf(a);
  const typesB = typesOf(b);
  if (typesA && typesB) {
    const lost = [...typesA].filter((t) => !typesB.has(t) && !(t === "integer" && typesB.has("number")));
    const gained = [...typesB].filter((t) => !typesA.has(t) && !(t === "integer" && typesA.has("number")));
    if (lost.length > 0) out.push({ path: label(path), change: `type narrowed from ${[...typesA].join(" | ")} to ${[...typesB].join(" | ")}`, breaking: true });
    else if (gained.length > 0) out.push({ path: label(path), change: `type widened from ${[...typesA].join(" | ")} to ${[...typesB].join(" | ")}`, breaking: false });
    if (lost.length > 0 && gained.length > 0) return;
  } else if (JSON.stringify(a) !== JSON.stringify(b) && (a.anyOf || a.oneOf || a.allOf || b.anyOf || b.oneOf || b.allOf || a.$ref || b.$ref)) {
    out.push({ path: label(path), change: "the alternatives changed (not compared one by one); review them", breaking: true });
    return;
  }
  compareValues(a, b, path, out);
  compareBounds(a, b, path, out);
  if (a.properties || b.properties) compareObjects(a, b, path, out);
  if (a.items && b.items && typeof a.items === "object" && typeof b.items === "object") compareNode(a.items as JsonSchema, b.items as JsonSchema, `${path}[]`, out);
}

function compareValues(a: JsonSchema, b: JsonSchema, path: string, out: PayloadFieldChange[]): void {
  const values = (n: JsonSchema): unknown[] | null => (Array.isArray(n.enum) ? n.enum : "const" in n ? [n.const] : null);
  const va = values(a);
  const vb = values(b);
  if (va === null && vb === null) return;
  if (va === null) {
    out.push({ path: label(path), change: `only ${vb!.map((v) => JSON.stringify(v)).join(", ")} accepted`, breaking: true });
    return;
  }
  if (vb === null) {
    out.push({ path: label(path), change: "any value of its type accepted (no longer a fixed list)", breaking: false });
    return;
  }
  const keyOf = (v: unknown) => JSON.stringify(v);
  const removed = va.filter((v) => !vb.some((w) => keyOf(w) === keyOf(v)));
  const added = vb.filter((v) => !va.some((w) => keyOf(w) === keyOf(v)));
  if (removed.length) out.push({ path: label(path), change: `no longer accepts ${removed.map(keyOf).join(", ")}`, breaking: true });
  if (added.length) out.push({ path: label(path), change: `also accepts ${added.map(keyOf).join(", ")}`, breaking: false });
}

function compareBounds(a: JsonSchema, b: JsonSchema, path: string, out: PayloadFieldChange[]): void {
  for (const k of LOWER_BOUNDS) {
    if (a[k] === b[k]) continue;
    const tighter = b[k] !== undefined && (a[k] === undefined || (b[k] as number) > (a[k] as number));
    out.push({ path: label(path), change: b[k] === undefined ? `${k} ${String(a[k])} removed` : `${k} ${a[k] === undefined ? "set to" : `${String(a[k])} →`} ${String(b[k])}`, breaking: tighter });
  }
  for (const k of UPPER_BOUNDS) {
    if (a[k] === b[k]) continue;
    const tighter = b[k] !== undefined && (a[k] === undefined || (b[k] as number) < (a[k] as number));
    out.push({ path: label(path), change: b[k] === undefined ? `${k} ${String(a[k])} removed` : `${k} ${a[k] === undefined ? "set to" : `${String(a[k])} →`} ${String(b[k])}`, breaking: tighter });
  }
  for (const k of EXACT) {
    if (a[k] === b[k]) continue;
    out.push({ path: label(path), change: b[k] === undefined ? `${k} ${JSON.stringify(a[k])} removed` : `${k} ${a[k] === undefined ? "set to" : `${JSON.stringify(a[k])} →`} ${JSON.stringify(b[k])}`, breaking: b[k] !== undefined });
  }
}

function compareObjects(a: JsonSchema, b: JsonSchema, path: string, out: PayloadFieldChange[]): void {
  const propsA = (a.properties ?? {}) as Record<string, JsonSchema>;
  const propsB = (b.properties ?? {}) as Record<string, JsonSchema>;
  const reqA = new Set((a.required ?? []) as string[]);
  const reqB = new Set((b.required ?? []) as string[]);
  const at = (key: string) => (path === "" ? key : `${path}.${key}`);
  for (const key of Object.keys(propsA)) {
    if (!(key in propsB)) out.push({ path: at(key), change: "field removed", breaking: true });
  }
  for (const [key, schema] of Object.entries(propsB)) {
    if (!(key in propsA)) {
      out.push({ path: at(key), change: reqB.has(key) ? "new required field" : "new optional field", breaking: reqB.has(key) });
      continue;
    }
    if (reqB.has(key) && !reqA.has(key)) out.push({ path: at(key), change: "now required", breaking: true });
    if (!reqB.has(key) && reqA.has(key)) out.push({ path: at(key), change: "now optional", breaking: false });
    compareNode(propsA[key]!, schema, at(key), out);
  }
  const closedA = a.additionalProperties === false;
  const closedB = b.additionalProperties === false;
  if (!closedA && closedB) out.push({ path: label(path), change: "unknown fields are refused", breaking: true });
  if (closedA && !closedB) out.push({ path: label(path), change: "unknown fields are accepted", breaking: false });
}

/**
 * The payload schemas the modules under `root` declare: every task declared with `schema`, as its JSON Schema.
 * Imports the tasks files (as start-up does, starting nothing); TypeScript files need a loader registered first.
 */
export async function readPayloadSchemas(root: string): Promise<PayloadSchemaEntry[]> {
  const { discoverModules } = await import("../modules/discover.js");
  const entries: PayloadSchemaEntry[] = [];
  for (const module of await discoverModules(root)) {
    for (const definition of module.definitions) {
      const schema = (definition.options as { schema?: StandardSchemaV1 } | undefined)?.schema;
      if (!schema) continue;
      const subscriber = (definition as { kind?: string; eventType?: string }).kind === "subscriber";
      entries.push({
        kind: subscriber ? "event" : "task",
        name: subscriber ? (definition as unknown as { eventType: string }).eventType : definition.name,
        vendor: schema["~standard"].vendor,
        jsonSchema: payloadJsonSchema(schema),
      });
    }
  }
  return entries;
}
