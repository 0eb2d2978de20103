"use client";
import { useQueries } from "@tanstack/react-query";
import { useState } from "react";
import { Button } from "~/components/button";
import { Card } from "~/components/card";
import { EmptyState } from "~/components/empty-state";
import { JobDetail } from "~/components/job-detail";
import { adminClient } from "~/trpc/client";
import { useServices } from "~/trpc/provider";

/** Finds a job by id on every service at once (ids are unique; the one that knows it answers). */
export function JobSearch({ initialId }: { initialId: string }) {
  const services = useServices();
  const [draft, setDraft] = useState(initialId);
  const [id, setId] = useState(initialId);
  const lookups = useQueries({
    queries: services.map((s) => ({
      queryKey: [s, "jobs.get", id],
      queryFn: () => adminClient(s).jobs.get.query({ id }),
      enabled: id !== "",
    })),
  });
  const found = services.filter((_, i) => lookups[i]?.data?.job);
  const pending = lookups.some((q) => q.isFetching && !q.data);
  return (
    <div className="stack">
      <form className="row" role="search" onSubmit={(e) => { e.preventDefault(); setId(draft.trim()); }}>
        <label className="field">
          Job id
          <input className="input" style={{ minWidth: 360 }} value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="a job id from a log line or the dead-letter table" />
        </label>
        <Button type="submit" variant="primary">Find</Button>
      </form>
      {id === "" ? (
        <EmptyState title="Search by job id">Paste the id from a log line, a trace or a dead letter.</EmptyState>
      ) : pending ? (
        <p className="muted">Searching {services.length} service{services.length === 1 ? "" : "s"}…</p>
      ) : found.length === 0 ? (
        <EmptyState title="No job with this id">None of {services.join(", ")} knows {id}.</EmptyState>
      ) : (
        found.map((s) => (
          <Card key={s} title={s}>
            <JobDetail service={s} id={id} />
          </Card>
        ))
      )}
    </div>
  );
}
