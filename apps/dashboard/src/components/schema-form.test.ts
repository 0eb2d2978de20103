import { describe, expect, it } from "vitest";
import { formFields } from "./schema-form";

describe("formFields", () => {
  it("turns a flat object schema into one field per property, required ones marked, enums as choices", () => {
    expect(
      formFields({
        type: "object",
        properties: { to: { type: "string", description: "an email" }, count: { type: "integer" }, urgent: { type: "boolean" }, lang: { enum: ["en", "fr"] } },
        required: ["to"],
      }),
    ).toEqual([
      { name: "to", type: "string", required: true, choices: null, description: "an email" },
      { name: "count", type: "integer", required: false, choices: null, description: null },
      { name: "urgent", type: "boolean", required: false, choices: null, description: null },
      { name: "lang", type: "string", required: false, choices: ["en", "fr"], description: null },
    ]);
  });

  it("leaves to the JSON editor what a form cannot hold: nested objects, arrays, no schema", () => {
    expect(formFields({ type: "object", properties: { address: { type: "object", properties: {} } } })).toBeNull();
    expect(formFields({ type: "object", properties: { lines: { type: "array" } } })).toBeNull();
    expect(formFields({ type: "array" })).toBeNull();
    expect(formFields(null)).toBeNull();
  });
});
