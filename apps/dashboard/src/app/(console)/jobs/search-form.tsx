"use client";
import { useState } from "react";
import { Button } from "~/components/button";
import type { JobSearchInput, JobState } from "~/trpc/contract";

const STATES: JobState[] = ["ready", "running", "completed", "dead"];

export interface SearchDraft {
  id: string;
  task: string;
  tenant: string;
  state: "" | JobState;
  path: string;
  value: string;
  as: "text" | "number" | "boolean";
}

export const EMPTY_DRAFT: SearchDraft = { id: "", task: "", tenant: "", state: "", path: "", value: "", as: "text" };

/** Turns the form into the admin API's search input, or says what is wrong with it. */
export function toSearchInput(draft: SearchDraft): { input: JobSearchInput } | { error: string } {
  const input: JobSearchInput = {};
  if (draft.id.trim()) input.id = draft.id.trim();
  if (draft.task.trim()) input.task = draft.task.trim();
  if (draft.tenant.trim()) input.tenant = draft.tenant.trim();
  if (draft.state) input.state = draft.state;
  const path = draft.path.trim();
  if (path || draft.value.trim()) {
    if (!/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/.test(path)) return { error: "The payload field is a dot path such as customer.id." };
    let equals: string | number | boolean = draft.value;
    if (draft.as === "number") {
      equals = Number(draft.value);
      if (draft.value.trim() === "" || !Number.isFinite(equals)) return { error: `"${draft.value}" is not a number.` };
    } else if (draft.as === "boolean") {
      if (!/^(true|false)$/.test(draft.value.trim())) return { error: "A true/false value is true or false." };
      equals = draft.value.trim() === "true";
    }
    input.payload = { path, equals };
  }
  if (Object.keys(input).length === 0) return { error: "Fill in at least one field." };
  return { input };
}

export function SearchForm({ initial, onSearch }: { initial: SearchDraft; onSearch: (draft: SearchDraft) => void }) {
  const [draft, setDraft] = useState(initial);
  const set = (patch: Partial<SearchDraft>) => setDraft((d) => ({ ...d, ...patch }));
  return (
    <form className="stack" style={{ gap: 10 }} role="search" aria-label="Find jobs" onSubmit={(e) => { e.preventDefault(); onSearch(draft); }}>
      <div className="inline-form">
        <label className="field">
          Job id
          <input className="input" style={{ minWidth: 320 }} value={draft.id} onChange={(e) => set({ id: e.target.value })} placeholder="from a log line, a trace or a dead letter" />
        </label>
        <label className="field">
          Task
          <input className="input" value={draft.task} onChange={(e) => set({ task: e.target.value })} placeholder="billing.charge" />
        </label>
        <label className="field">
          Tenant
          <input className="input" style={{ minWidth: 120 }} value={draft.tenant} onChange={(e) => set({ tenant: e.target.value })} placeholder="acme" />
        </label>
        <label className="field">
          State
          <select className="input" style={{ minWidth: 120 }} value={draft.state} onChange={(e) => set({ state: e.target.value as SearchDraft["state"] })}>
            <option value="">any</option>
            {STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
      </div>
      <div className="inline-form">
        <label className="field">
          Payload field
          <input className="input" style={{ minWidth: 200 }} value={draft.path} onChange={(e) => set({ path: e.target.value })} placeholder="customer.id" />
        </label>
        <label className="field">
          equals
          <input className="input" style={{ minWidth: 200 }} value={draft.value} onChange={(e) => set({ value: e.target.value })} placeholder="cus_42" />
        </label>
        <label className="field">
          as
          <select className="input" style={{ minWidth: 90 }} value={draft.as} onChange={(e) => set({ as: e.target.value as SearchDraft["as"] })}>
            <option value="text">text</option>
            <option value="number">number</option>
            <option value="boolean">true/false</option>
          </select>
        </label>
        <Button type="submit" variant="primary">Find</Button>
        <Button onClick={() => { setDraft(EMPTY_DRAFT); onSearch(EMPTY_DRAFT); }}>Clear</Button>
      </div>
    </form>
  );
}
