import { describe, expect, it } from "vitest";
import { EMPTY_DRAFT, searchesOf, toSearchInput } from "./search-input";

describe("the job search form's input", () => {
  it("sends only the fields filled in, trimmed", () => {
    expect(toSearchInput({ ...EMPTY_DRAFT, id: "  01J9  ", state: "dead" })).toEqual({ input: { id: "01J9", state: "dead" } });
  });

  it("types a payload value as text, number or true/false", () => {
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "customer.id", value: "42" })).toEqual({ input: { payload: { path: "customer.id", equals: "42" } } });
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "amount", value: "42.5", as: "number" })).toEqual({ input: { payload: { path: "amount", equals: 42.5 } } });
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "vip", value: "false", as: "boolean" })).toEqual({ input: { payload: { path: "vip", equals: false } } });
  });

  it("says what is wrong instead of searching", () => {
    expect(toSearchInput(EMPTY_DRAFT)).toEqual({ error: "Fill in at least one field." });
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "customer..id", value: "1" })).toEqual({ error: "The payload field is a dot path such as customer.id." });
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "amount", value: "lots", as: "number" })).toEqual({ error: '"lots" is not a number.' });
    expect(toSearchInput({ ...EMPTY_DRAFT, path: "vip", value: "yes", as: "boolean" })).toEqual({ error: "A true/false value is true or false." });
  });

  it("looks for a task's or a tenant's jobs in every state unless one is chosen", () => {
    expect(searchesOf({ task: "billing.charge" }).map((i) => i.state)).toEqual(["ready", "scheduled", "running", "completed", "cancelled", "expired", "dead"]);
    expect(searchesOf({ tenant: "acme", state: "completed" })).toEqual([{ tenant: "acme", state: "completed" }]);
    expect(searchesOf({ task: "billing.charge", payload: { path: "customer.id", equals: "c-1" } })).toHaveLength(1);
    expect(searchesOf({ id: "01J9" })).toEqual([{ id: "01J9" }]);
  });
});
