"use client";
import type { DeadFilter } from "@jfast/runtime/admin";
import type { DeadLetterItem as DeadLetterView, DeadLetterPage } from "~/trpc/types";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { JobDetail } from "~/components/job-detail";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import { adminClient } from "~/trpc/client";
import { useRoles } from "~/trpc/hooks";
import { useServices } from "~/trpc/provider";
import { BulkDialog, type BulkAction } from "./bulk-dialog";
import { ErrorGroups } from "./error-groups";
import { Replays } from "./replays";

interface Row {
  service: string;
  item: DeadLetterView;
}

export function DeadLetters({ initialService }: { initialService: string }) {
  const services = useServices();
  const roles = useRoles(services);
  const [service, setService] = useState(services.includes(initialService) ? initialService : "");
  const [draft, setDraft] = useState<DeadFilter>({});
  const [filter, setFilter] = useState<DeadFilter>({});
  const [view, setView] = useState<"table" | "groups">("table");
  const [open, setOpen] = useState<Row | null>(null);
  const [bulk, setBulk] = useState<BulkAction | null>(null);
  const [notice, setNotice] = useState<{ tone: "bad" | "info"; text: string } | null>(null);
  const selected = service ? [service] : services;
  const cleanFilter = useMemo(() => compact(filter), [filter]);

  const lists = useQueries({
    queries: selected.map((s) => ({
      queryKey: [s, "deadLetters.list", cleanFilter],
      queryFn: () => adminClient(s).deadLetters.list.query({ limit: 100, filter: cleanFilter }),
    })),
  });
  const rows: Row[] = selected
    .flatMap((s, i) => (lists[i]?.data?.items ?? []).map((item) => ({ service: s, item })))
    .sort((a, b) => b.item.diedAt.localeCompare(a.item.diedAt));
  const failures = selected.map((s, i) => ({ service: s, error: lists[i]?.error })).filter((f) => f.error);
  const loading = lists.some((q) => q.isPending);

  const act = useRowAction(setNotice);
  const applyGroup = useCallback((s: string, group: string) => {
    setService(s);
    setFilter({ group });
    setDraft({});
    setView("table");
  }, []);

  return (
    <div className="stack">
      <form
        className="row"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter(draft);
        }}
      >
        <label className="field">
          Service
          <select className="input" value={service} onChange={(e) => setService(e.target.value)} aria-label="Service">
            <option value="">All services</option>
            {services.map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label className="field">
          Task
          <input className="input" value={draft.task ?? ""} onChange={(e) => setDraft({ ...draft, task: e.target.value })} placeholder="billing.charge" />
        </label>
        <label className="field">
          Tenant
          <input className="input" value={draft.tenantId ?? ""} onChange={(e) => setDraft({ ...draft, tenantId: e.target.value })} placeholder="acme" />
        </label>
        <label className="field">
          Error text
          <input className="input" value={draft.errorText ?? ""} onChange={(e) => setDraft({ ...draft, errorText: e.target.value })} placeholder="declined" />
        </label>
        <Button type="submit">Apply</Button>
        {Object.keys(cleanFilter).length > 0 ? (
          <Button onClick={() => { setFilter({}); setDraft({}); }}>Clear{cleanFilter.group ? " group" : ""}</Button>
        ) : null}
        <span style={{ flex: 1 }} />
        <div className="tabs" role="group" aria-label="View">
          <button type="button" aria-pressed={view === "table"} onClick={() => setView("table")}>Table</button>
          <button type="button" aria-pressed={view === "groups"} onClick={() => setView("groups")}>Grouped by error</button>
        </div>
      </form>

      {notice ? <p className={`alert alert-${notice.tone}`} role={notice.tone === "bad" ? "alert" : "status"}>{notice.text}</p> : null}
      {failures.map((f) => (
        <ErrorState key={f.service} title={`${f.service}:`} error={f.error} />
      ))}
      <Replays services={selected} />

      {view === "groups" ? (
        <ErrorGroups services={selected} filter={cleanFilter} roles={roles} onShow={applyGroup} onBulk={setBulk} />
      ) : (
        <>
          <div className="row">
            <span className="muted">{loading ? "Loading…" : `${rows.length} dead letter${rows.length === 1 ? "" : "s"}${truncated(lists.map((q) => q.data)) ? " (more on the services: narrow the filter)" : ""}`}</span>
            <span style={{ flex: 1 }} />
            <Button onClick={() => setBulk({ kind: "retry", services: selected, filter: cleanFilter })} disabled={rows.length === 0}>Retry all matching…</Button>
            <Button variant="danger" onClick={() => setBulk({ kind: "discard", services: selected, filter: cleanFilter })} disabled={rows.length === 0}>Discard all matching…</Button>
          </div>
          {loading && rows.length === 0 ? (
            <Loading what="dead letters" />
          ) : (
            <Table<Row>
              label="Dead letters"
              rows={rows}
              rowKey={(r) => `${r.service}/${r.item.id}`}
              empty={<EmptyState title="No dead letters">{Object.keys(cleanFilter).length ? "Nothing matches this filter." : "Every job either ran or is still being retried."}</EmptyState>}
              columns={[
                { key: "service", header: "Service", cell: (r) => <Badge tone="info">{r.service}</Badge> },
                { key: "task", header: "Task", cell: (r) => <code>{r.item.task}</code> },
                {
                  key: "error",
                  header: "Error",
                  cell: (r) => (
                    <div>
                      <Badge tone="bad">{r.item.lastError?.class ?? "—"}</Badge> <span className="error-text">{r.item.lastError?.message ?? "no error recorded"}</span>
                      {r.item.lastError?.stack ? (
                        <details>
                          <summary>Stack</summary>
                          <pre className="code-block">{r.item.lastError.stack}</pre>
                        </details>
                      ) : null}
                    </div>
                  ),
                },
                { key: "attempts", header: "Attempts", numeric: true, cell: (r) => r.item.attempts },
                { key: "tenant", header: "Tenant", cell: (r) => r.item.tenantId ?? <span className="muted">—</span> },
                { key: "died", header: "Died", cell: (r) => <RelativeTime iso={r.item.diedAt} /> },
                {
                  key: "actions",
                  header: <span className="sr-only">Actions</span>,
                  cell: (r) => {
                    const readOnly = roles[r.service] !== "operator";
                    const why = readOnly ? `the dashboard's token for ${r.service} is read-only (viewer)` : undefined;
                    return (
                      <div className="row" style={{ flexWrap: "nowrap" }}>
                        <Button small onClick={() => setOpen(r)} aria-label={`Details of ${r.item.id}`}>Details</Button>
                        <Button small variant="primary" disabled={readOnly || act.isPending} title={why} aria-label={`Retry ${r.item.id}`} onClick={() => act.mutate({ kind: "retry", service: r.service, id: r.item.id })}>Retry</Button>
                        <Button small variant="danger" disabled={readOnly || act.isPending} title={why} aria-label={`Discard ${r.item.id}`} onClick={() => act.mutate({ kind: "discard", service: r.service, id: r.item.id })}>Discard</Button>
                      </div>
                    );
                  },
                },
              ]}
            />
          )}
        </>
      )}

      {open ? (
        <Drawer title={`${open.item.task} · ${open.item.id}`} onClose={() => setOpen(null)}>
          <JobDetail service={open.service} id={open.item.id} />
        </Drawer>
      ) : null}
      {bulk ? <BulkDialog action={bulk} roles={roles} onClose={() => setBulk(null)} onDone={(text) => setNotice({ tone: "info", text })} /> : null}
    </div>
  );
}

/** Retry or discard one dead letter, removing it from the table at once and putting it back if the call fails. */
function useRowAction(setNotice: (n: { tone: "bad" | "info"; text: string } | null) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ kind, service, id }: { kind: "retry" | "discard"; service: string; id: string }) =>
      kind === "retry" ? adminClient(service).deadLetters.retry.mutate({ ids: [id] }) : adminClient(service).deadLetters.discard.mutate({ ids: [id] }),
    onMutate: async ({ service, id }) => {
      await queryClient.cancelQueries({ queryKey: [service, "deadLetters.list"] });
      const snapshot = queryClient.getQueriesData<DeadLetterPage>({ queryKey: [service, "deadLetters.list"] });
      queryClient.setQueriesData<DeadLetterPage>({ queryKey: [service, "deadLetters.list"] }, (page) => (page ? { ...page, items: page.items.filter((d) => d.id !== id) } : page));
      return { snapshot };
    },
    onError: (error, { kind, service, id }, context) => {
      for (const [key, data] of context?.snapshot ?? []) queryClient.setQueryData(key, data);
      setNotice({ tone: "bad", text: `Could not ${kind} ${id} on ${service}: ${error.message}` });
    },
    onSuccess: (_result, { kind, service, id }) => setNotice({ tone: "info", text: `${kind === "retry" ? "Requeued" : "Discarded"} ${id} on ${service}.` }),
    onSettled: (_r, _e, { service }) => queryClient.invalidateQueries({ queryKey: [service] }),
  });
}

function compact(filter: DeadFilter): DeadFilter {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => typeof v === "string" && v.trim() !== "").map(([k, v]) => [k, (v as string).trim()]));
}

function truncated(pages: (DeadLetterPage | undefined)[]): boolean {
  return pages.some((p) => p?.nextCursor);
}
