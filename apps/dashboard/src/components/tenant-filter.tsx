"use client";
import { useState } from "react";
import { Button } from "./button";

/**
 * The tenant filter of a page: typed into a draft, applied on submit (so every keystroke is not a query),
 * cleared with one click. An empty tenant means all tenants.
 */
export function TenantFilter({ tenant, onChange, initial = "" }: { tenant: string; onChange: (tenant: string) => void; initial?: string }) {
  const [draft, setDraft] = useState(initial);
  return (
    <form className="inline-form" aria-label="Filters" onSubmit={(e) => { e.preventDefault(); onChange(draft.trim()); }}>
      <label className="field">
        Tenant
        <input className="input" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="all tenants" />
      </label>
      <Button type="submit">Apply</Button>
      {tenant ? <Button onClick={() => { setDraft(""); onChange(""); }}>Clear</Button> : null}
    </form>
  );
}
