"use client";

/** A property a form can edit: a string, number, integer or boolean (an enum of strings as a choice). */
interface Field {
  name: string;
  type: "string" | "number" | "integer" | "boolean";
  required: boolean;
  choices: string[] | null;
  description: string | null;
}

/**
 * The fields of a flat object schema, or null when the schema is not one a form can hold (nested objects, arrays,
 * unions): the JSON editor then stays the only way.
 */
export function formFields(schema: Record<string, unknown> | null | undefined): Field[] | null {
  if (!schema || schema.type !== "object" || typeof schema.properties !== "object" || schema.properties === null) return null;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields: Field[] = [];
  for (const [name, raw] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
    const choices = Array.isArray(raw.enum) && raw.enum.every((v) => typeof v === "string") ? (raw.enum as string[]) : null;
    const type = choices ? "string" : raw.type;
    if (type !== "string" && type !== "number" && type !== "integer" && type !== "boolean") return null;
    fields.push({ name, type, required: required.has(name), choices, description: typeof raw.description === "string" ? raw.description : null });
  }
  return fields.length > 0 ? fields : null;
}

/** One input per field, writing into the payload object; the JSON editor beside it shows the same value. */
export function SchemaForm({ fields, value, onChange }: { fields: Field[]; value: Record<string, unknown>; onChange: (value: Record<string, unknown>) => void }) {
  const set = (name: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined) delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  return (
    <fieldset className="stack" style={{ border: 0, padding: 0 }} aria-label="Payload fields">
      {fields.map((f) => {
        const label = `${f.name}${f.required ? " (required)" : ""}`;
        const current = value[f.name];
        if (f.type === "boolean") {
          return (
            <label key={f.name} className="row">
              <input type="checkbox" checked={current === true} onChange={(e) => set(f.name, e.target.checked)} /> {label}
            </label>
          );
        }
        if (f.choices) {
          return (
            <label key={f.name} className="field">
              {label}
              <select className="input" value={typeof current === "string" ? current : ""} onChange={(e) => set(f.name, e.target.value || undefined)}>
                <option value="">—</option>
                {f.choices.map((c) => (
                  <option key={c} value={c}>{c}</option>
                ))}
              </select>
            </label>
          );
        }
        const numeric = f.type !== "string";
        return (
          <label key={f.name} className="field">
            {label}
            <input
              className="input"
              type={numeric ? "number" : "text"}
              step={f.type === "integer" ? 1 : undefined}
              value={current === undefined || current === null ? "" : String(current)}
              placeholder={f.description ?? undefined}
              onChange={(e) => set(f.name, e.target.value === "" ? undefined : numeric ? Number(e.target.value) : e.target.value)}
            />
          </label>
        );
      })}
    </fieldset>
  );
}
