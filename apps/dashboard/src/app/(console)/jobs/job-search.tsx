"use client";
import { useInfiniteQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "~/components/badge";
import { Button } from "~/components/button";
import { Card } from "~/components/card";
import { Drawer } from "~/components/drawer";
import { EmptyState, Loading } from "~/components/empty-state";
import { JobDetail } from "~/components/job-detail";
import { QueryError } from "~/components/query-error";
import { Table } from "~/components/table";
import { RelativeTime } from "~/components/time";
import type { AdminTRPC } from "~/trpc/client";
import { isMissingProcedure } from "~/trpc/errors";
import type { JobSearchInput, JobSearchView } from "~/trpc/types";

type FoundJob = JobSearchView["items"][number];
import { useServiceTRPC, useServices } from "~/trpc/provider";
import { SearchForm } from "./search-form";
import { EMPTY_DRAFT, searchesOf, toSearchInput, type SearchDraft } from "./search-input";

/** `waiting`: a flow step whose parents have not all completed (docs/flows.md#states). */
const STATE_TONE: Record<string, "warn" | "info" | "ok" | "bad" | "neutral"> = { waiting: "warn", ready: "info", running: "info", completed: "ok", dead: "bad", cancelled: "neutral", expired: "neutral" };

/** Finds jobs on every service at once: by id, task, tenant, state, or a payload field's value. */
export function JobSearch({ initial }: { initial: { id: string; tenant: string } }) {
  const services = useServices();
  const start = { ...EMPTY_DRAFT, ...initial };
  const first = toSearchInput(start);
  const [input, setInput] = useState<JobSearchInput | null>("input" in first ? first.input : null);
  const [problem, setProblem] = useState<string | null>(null);
  const [open, setOpen] = useState<{ service: string; id: string } | null>(null);
  const search = (draft: SearchDraft) => {
    const parsed = toSearchInput(draft);
    if ("error" in parsed) {
      setProblem(draft === EMPTY_DRAFT ? null : parsed.error);
      setInput(null);
    } else {
      setProblem(null);
      setInput(parsed.input);
    }
  };
  return (
    <div className="stack">
      <SearchForm initial={start} onSearch={search} />
      {problem ? <p className="alert alert-bad" role="alert">{problem}</p> : null}
      {!input ? (
        <EmptyState title="Search jobs">By id (any state, every service), by task or tenant in every state, or dead letters by a payload field such as <code>customer.id</code>. Searches stay bounded: each service says what it looked through.</EmptyState>
      ) : (
        services.map((s) => <ServiceResults key={s} service={s} input={input} onOpen={(id) => setOpen({ service: s, id })} />)
      )}
      {open ? (
        <Drawer title={`${open.service} · ${open.id}`} onClose={() => setOpen(null)}>
          <JobDetail service={open.service} id={open.id} />
        </Drawer>
      ) : null}
    </div>
  );
}

/** One service's answers: one search, or one per state for a task or tenant searched in every state (searchesOf). */
function ServiceResults({ service, input, onOpen }: { service: string; input: JobSearchInput; onOpen: (id: string) => void }) {
  const searches = searchesOf(input);
  if (searches.length === 1) return <SearchResults service={service} input={input} onOpen={onOpen} />;
  return (
    <Card title={service} label={`results of ${service}`} actions={<span className="muted" data-scope={service}>searched: every state</span>}>
      <div className="stack">
        {searches.map((search) => (
          <section key={search.state} aria-label={`${search.state} jobs on ${service}`} data-search-state={search.state}>
            <h3>{search.state}</h3>
            <SearchResults service={service} input={search} onOpen={onOpen} bare />
          </section>
        ))}
      </div>
    </Card>
  );
}

function SearchResults({ service, input, onOpen, bare }: { service: string; input: JobSearchInput; onOpen: (id: string) => void; bare?: boolean }) {
  const trpc = useServiceTRPC(service);
  const queryClient = useQueryClient();
  const query = useInfiniteQuery({
    // Each page is the router's jobs.search query: infiniteQueryOptions would add a `direction` its strict input refuses.
    queryKey: trpc.jobs.search.infiniteQueryKey(input),
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => searchOrGet(() => queryClient.fetchQuery(trpc.jobs.search.queryOptions({ ...input, limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }, { staleTime: 0 })), trpc, queryClient, input),
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: false,
  });
  const items = query.data?.pages.flatMap((p) => p.items) ?? [];
  const scope = query.data?.pages[0]?.scope;
  const body = (
    <>
      {query.isPending ? (
        <Loading what={`${service}'s jobs`} />
      ) : query.isError ? (
        <QueryError service={service} procedure="jobs.search" error={query.error} what="searches other than by id" />
      ) : !query.data.pages[0]?.enabled ? (
        <EmptyState title="No queue">{service} does not run a queue.</EmptyState>
      ) : items.length === 0 && !query.hasNextPage ? (
        bare ? <p className="muted">None{scope ? ` (${scope})` : ""}.</p> : <EmptyState title="No matching job">{service} has no job that matches.</EmptyState>
      ) : (
        <div className="stack">
          <Table<FoundJob>
            label={`Jobs found on ${service}`}
            rows={items}
            rowKey={(j) => j.id}
            columns={[
              { key: "id", header: "Id", cell: (j) => <code>{j.id}</code> },
              { key: "task", header: "Task", cell: (j) => <code>{j.task}</code> },
              { key: "state", header: "State", cell: (j) => <Badge tone={STATE_TONE[j.state]}>{j.state}</Badge> },
              { key: "tenant", header: "Tenant", cell: (j) => j.tenantId ?? <span className="muted">—</span> },
              { key: "attempts", header: "Attempts", numeric: true, cell: (j) => j.attempts },
              { key: "when", header: "Created", cell: (j) => <RelativeTime iso={j.createdAt} /> },
              { key: "open", header: <span className="sr-only">Actions</span>, cell: (j) => <Button small onClick={() => onOpen(j.id)} aria-label={`Details of ${j.id}`}>Details</Button> },
            ]}
          />
          {query.data.pages.at(-1)?.budgetReached ? <p className="muted">This search stopped at its bound on {service}; continue it, or narrow the search.</p> : null}
          {query.hasNextPage ? (
            <Button onClick={() => query.fetchNextPage()} disabled={query.isFetchingNextPage}>
              {query.isFetchingNextPage ? "Loading…" : `More from ${service}`}
            </Button>
          ) : null}
        </div>
      )}
    </>
  );
  if (bare) return body;
  return (
    <Card title={service} label={`results of ${service}`} actions={scope ? <span className="muted" data-scope={service}>searched: {scope}</span> : null}>
      {body}
    </Card>
  );
}

/** jobs.search; on a service whose runtime predates it, a search by id alone still works through jobs.get. */
async function searchOrGet(search: () => Promise<JobSearchView>, trpc: AdminTRPC, queryClient: QueryClient, input: JobSearchInput): Promise<JobSearchView> {
  try {
    return await search();
  } catch (error) {
    const onlyId = input.id && Object.keys(input).every((k) => k === "id" || k === "limit" || k === "cursor");
    if (!isMissingProcedure(error) || !onlyId) throw error;
    const { job } = await queryClient.fetchQuery(trpc.jobs.get.queryOptions({ id: input.id! }));
    return { enabled: true, items: job ? [job] : [], nextCursor: null, scope: "by id", budgetReached: false };
  }
}
