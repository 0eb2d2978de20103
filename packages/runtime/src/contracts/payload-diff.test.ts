import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { StandardSchemaV1 } from "../core/payload-schema.js";
import { diffPayloadSchemas, payloadJsonSchema, type PayloadSchemaEntry } from "./payload-diff.js";

const entry = (schema: unknown, name = "orders.charge"): PayloadSchemaEntry => {
  const s = schema as StandardSchemaV1;
  return { kind: "task", name, vendor: s["~standard"].vendor, jsonSchema: payloadJsonSchema(s) };
};
const fields = (before: unknown, after: unknown) => diffPayloadSchemas([entry(before)], [entry(after)])[0]?.fields ?? [];

describe("payload schema changes", () => {
  it("classes narrowing, nullability, bounds and nested fields (zod)", () => {
    expect(fields(z.object({ id: z.union([z.string(), z.number()]) }), z.object({ id: z.number() }))).toEqual([{ path: "id", change: "type narrowed from string | number to number", breaking: true }]);
    expect(fields(z.object({ id: z.number() }), z.object({ id: z.union([z.string(), z.number()]) }))).toEqual([{ path: "id", change: "type widened from number to string | number", breaking: false }]);
    expect(fields(z.object({ note: z.string().nullable() }), z.object({ note: z.string() }))).toEqual([{ path: "note", change: "type narrowed from string | null to string", breaking: true }]);
    expect(fields(z.object({ sku: z.string() }), z.object({ sku: z.string().min(3) }))).toEqual([{ path: "sku", change: "minLength set to 3", breaking: true }]);
    expect(fields(z.object({ sku: z.string().max(3) }), z.object({ sku: z.string().max(5) }))).toEqual([{ path: "sku", change: "maxLength 3 → 5", breaking: false }]);
    expect(fields(z.object({ lines: z.array(z.object({ sku: z.string(), qty: z.number() })) }), z.object({ lines: z.array(z.object({ sku: z.string() })) }))).toEqual([
      { path: "lines[].qty", change: "field removed", breaking: true },
    ]);
    expect(fields(z.object({ a: z.string() }), z.object({ a: z.string() }))).toEqual([]);
  });

  it("reads valibot's schemas, which give no JSON Schema of their own", () => {
    expect(payloadJsonSchema(v.object({ to: v.string(), cc: v.optional(v.string()) }) as unknown as StandardSchemaV1)).toEqual({
      type: "object",
      properties: { to: { type: "string" }, cc: { type: "string" } },
      required: ["to"],
    });
    expect(fields(v.object({ to: v.string(), cc: v.optional(v.string()) }), v.object({ to: v.string(), cc: v.string() }))).toEqual([{ path: "cc", change: "now required", breaking: true }]);
    expect(fields(v.object({ kind: v.picklist(["a", "b"]) }), v.object({ kind: v.picklist(["a"]) }))).toEqual([{ path: "kind", change: 'no longer accepts "b"', breaking: true }]);
  });

  it("reports tasks whose schema appears or goes, and a library without JSON Schema as something to review", () => {
    const opaque = { "~standard": { version: 1, vendor: "custom", validate: (value: unknown) => ({ value }) } };
    expect(diffPayloadSchemas([entry(opaque, "a")], [entry(z.object({ x: z.string() }), "a")])[0]).toMatchObject({ class: "breaking", fields: [{ path: "(payload)", breaking: true }] });
    expect(diffPayloadSchemas([], [entry(z.object({ x: z.string() }), "b")])[0]).toMatchObject({ change: "added", class: "compatible" });
    expect(diffPayloadSchemas([entry(z.object({ x: z.string() }), "c")], [])[0]).toMatchObject({ change: "removed", class: "compatible" });
  });
});
