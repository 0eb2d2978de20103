"use client";
import { useState } from "react";
import { Button } from "~/components/button";
import { TaskInput } from "~/components/task-input";
import { useServices } from "~/trpc/provider";
import { EMPTY_DRAFT, STATES, type SearchDraft } from "./search-input";

export function SearchForm({ initial, onSearch }: { initial: SearchDraft; onSearch: (draft: SearchDraft) => void }) {
  const services = useServices();
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
          <TaskInput services={services} value={draft.task} onChange={(task) => set({ task })} />
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
      <p className="muted">A job in any state is found by its id; a task or tenant is looked for in every state (or the one chosen); a payload field among dead letters.</p>
    </form>
  );
}
