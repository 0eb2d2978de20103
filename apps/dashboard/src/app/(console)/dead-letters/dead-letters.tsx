"use client";
import type { DeadFilter } from "@jfast/runtime/admin";
import type { DeadLetterItem as DeadLetterView, DeadLetterPage } from "~/trpc/types";
import { useIsMutating, useMutation, useQueries, useQueryClient, type QueryClient, type QueryKey } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Drawer } from "~/components/drawer";
import { EmptyState, ErrorState, Loading } from "~/components/empty-state";
import { JobDetail } from "~/components/job-detail";
import { NewJobDialog, type JobDraft } from "~/components/new-job-dialog";
import { EditRetry } from "./edit-retry";
import { Table } from "~/components/table";
import { TaskInput } from "~/components/task-input";
import { RelativeTime } from "~/components/time";
import { useMayAct, useRoles } from "~/trpc/hooks";
import type { AdminTRPC } from "~/trpc/client";
import { useServiceTRPC, useServices, useTRPC } from "~/trpc/provider";
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
  const may = useMayAct();
  const [service, setService] = useState(services.includes(initialService) ? initialService : "");
  const [draft, setDraft] = useState<DeadFilter>({});
  const [filter, setFilter] = useState<DeadFilter>({});
  const [view, setView] = useState<"table" | "groups">("table");
  const [open, setOpen] = useState<Row | null>(null);
  const [bulk, setBulk] = useState<BulkAction | null>(null);
  const [duplicate, setDuplicate] = useState<JobDraft | null>(null);
  const [notice, setNotice] = useState<{ tone: "bad" | "info"; text: string } | null>(null);
  const selected = service ? [service] : services;
  const cleanFilter = useMemo(() => compact(filter), [filter]);

  const trpc = useTRPC();
  const lists = useQueries({ queries: selected.map((s) => trpc(s).deadLetters.list.queryOptions({ limit: 100, filter: cleanFilter })) });
  const rows: Row[] = selected
    .flatMap((s, i) => (lists[i]?.data?.items ?? []).map((item) => ({ service: s, item })))
    .sort((a, b) => b.item.diedAt.localeCompare(a.item.diedAt));
  const failures = selected.map((s, i) => ({ service: s, error: lists[i]?.error })).filter((f) => f.error);
  const loading = lists.some((q) => q.isPending);

  const acting = useIsMutating({ predicate: isRowAction }) > 0;
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
          <TaskInput services={selected} value={draft.task ?? ""} onChange={(task) => setDraft({ ...draft, task })} />
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
        <ErrorGroups services={selected} filter={cleanFilter} roles={roles} bulk={may.bulk} onShow={applyGroup} onBulk={setBulk} />
      ) : (
        <>
          <div className="row">
            <span className="muted">{loading ? "Loading…" : `${rows.length} dead letter${rows.length === 1 ? "" : "s"}${truncated(lists.map((q) => q.data)) ? " (more on the services: narrow the filter)" : ""}`}</span>
            <span style={{ flex: 1 }} />
            {may.bulk ? <Button onClick={() => setBulk({ kind: "retry", services: selected, filter: cleanFilter })} disabled={rows.length === 0}>Retry all matching…</Button> : null}
            {may.bulk ? <Button variant="danger" onClick={() => setBulk({ kind: "discard", services: selected, filter: cleanFilter })} disabled={rows.length === 0}>Discard all matching…</Button> : null}
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
                      {/* The list carries no stacks: Details reads every attempt's, with its stack (jobs.get). */}
                      <Badge tone="bad">{r.item.lastError?.class ?? "—"}</Badge> <span className="error-text">{r.item.lastError?.message ?? "no error recorded"}</span>
                    </div>
                  ),
                },
                { key: "attempts", header: "Attempts", numeric: true, cell: (r) => r.item.attempts },
                { key: "tenant", header: "Tenant", cell: (r) => r.item.tenantId ?? <span className="muted">—</span> },
                { key: "died", header: "Died", cell: (r) => <RelativeTime iso={r.item.diedAt} /> },
                {
                  key: "actions",
                  header: <span className="sr-only">Actions</span>,
                  cell: (r) => <RowActions row={r} readOnly={roles[r.service] !== "operator"} hidden={!may.act} busy={acting} onOpen={setOpen} onNotice={setNotice} />,
                },
              ]}
            />
          )}
        </>
      )}

      {open ? (
        <Drawer title={`${open.item.task} · ${open.item.id}`} onClose={() => setOpen(null)}>
          <div className="stack">
            {may.act && roles[open.service] === "operator" ? (
              <>
                <EditRetry service={open.service} item={open.item} onDone={(text) => { setNotice({ tone: "info", text }); setOpen(null); }} />
                <div className="row">
                  <Button onClick={() => { setDuplicate({ service: open.service, task: open.item.task, payload: open.item.payload, tenant: open.item.tenantId }); setOpen(null); }}>Duplicate…</Button>
                </div>
              </>
            ) : null}
            <JobDetail service={open.service} id={open.item.id} />
          </div>
        </Drawer>
      ) : null}
      {duplicate ? <NewJobDialog services={services} draft={duplicate} onClose={() => setDuplicate(null)} onDone={(text) => setNotice({ tone: "info", text })} /> : null}
      {bulk ? <BulkDialog action={bulk} roles={roles} onClose={() => setBulk(null)} onDone={(text) => setNotice({ tone: "info", text })} /> : null}
    </div>
  );
}

type Notice = { tone: "bad" | "info"; text: string };

/** A row's retry or discard, from the service's deadLetters router (one row at a time on the page). */
const ROW_ACTIONS = new Set(["deadLetters.retry", "deadLetters.discard"]);
function isRowAction(mutation: { options: { mutationKey?: readonly unknown[] } }): boolean {
  const path = mutation.options.mutationKey?.[1];
  return Array.isArray(path) && ROW_ACTIONS.has(path.join("."));
}

function RowActions({ row, readOnly, hidden, busy, onOpen, onNotice }: { row: Row; readOnly: boolean; hidden: boolean; busy: boolean; onOpen: (row: Row) => void; onNotice: (notice: Notice) => void }) {
  const queryClient = useQueryClient();
  const trpc = useServiceTRPC(row.service);
  const retry = useMutation(trpc.deadLetters.retry.mutationOptions(rowAction(queryClient, trpc, row, "retry", onNotice)));
  const discard = useMutation(trpc.deadLetters.discard.mutationOptions(rowAction(queryClient, trpc, row, "discard", onNotice)));
  const why = readOnly ? `the dashboard's token for ${row.service} is read-only (viewer)` : undefined;
  const id = row.item.id;
  return (
    <div className="row" style={{ flexWrap: "nowrap" }}>
      <Button small onClick={() => onOpen(row)} aria-label={`Details of ${id}`}>Details</Button>
      {hidden ? null : <Button small variant="primary" disabled={readOnly || busy} title={why} aria-label={`Retry ${id}`} onClick={() => retry.mutate({ ids: [id] })}>Retry</Button>}
      {hidden ? null : <Button small variant="danger" disabled={readOnly || busy} title={why} aria-label={`Discard ${id}`} onClick={() => discard.mutate({ ids: [id] })}>Discard</Button>}
    </div>
  );
}

/** Retry or discard one dead letter, removing it from the table at once and putting it back if the call fails. */
function rowAction(queryClient: QueryClient, trpc: AdminTRPC, { service, item: { id } }: Row, kind: "retry" | "discard", setNotice: (notice: Notice) => void) {
  const lists = trpc.deadLetters.list.pathFilter();
  return {
    onMutate: async (): Promise<{ snapshot: [QueryKey, DeadLetterPage | undefined][] }> => {
      await queryClient.cancelQueries(lists);
      const snapshot = queryClient.getQueriesData<DeadLetterPage>(lists);
      queryClient.setQueriesData<DeadLetterPage>(lists, (page) => (page ? { ...page, items: page.items.filter((d) => d.id !== id) } : page));
      return { snapshot };
    },
    onError: (error: { message: string }, _input: unknown, context: { snapshot: [QueryKey, DeadLetterPage | undefined][] } | undefined) => {
      for (const [key, data] of context?.snapshot ?? []) queryClient.setQueryData(key, data);
      setNotice({ tone: "bad", text: `Could not ${kind} ${id} on ${service}: ${error.message}` });
    },
    onSuccess: () => setNotice({ tone: "info", text: `${kind === "retry" ? "Requeued" : "Discarded"} ${id} on ${service}.` }),
    // Everything of the service may have moved: depths, groups, the audit trail.
    onSettled: () => queryClient.invalidateQueries(trpc.pathFilter()),
  };
}

function compact(filter: DeadFilter): DeadFilter {
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => typeof v === "string" && v.trim() !== "").map(([k, v]) => [k, (v as string).trim()]));
}

function truncated(pages: (DeadLetterPage | undefined)[]): boolean {
  return pages.some((p) => p?.nextCursor);
}
