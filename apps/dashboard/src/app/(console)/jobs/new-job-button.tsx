"use client";
import { useState } from "react";
import { Button } from "~/components/button";
import { NewJobDialog } from "~/components/new-job-dialog";
import { useMayAct } from "~/trpc/hooks";
import { useServices } from "~/trpc/provider";

/** "New job" on the Jobs page, for the people who may act. */
export function NewJobButton() {
  const services = useServices();
  const may = useMayAct();
  const [open, setOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  if (!may.act || services.length === 0) return null;
  return (
    <div className="stack">
      <div className="row">
        <Button variant="primary" onClick={() => setOpen(true)}>New job</Button>
      </div>
      {notice ? <p className="alert alert-info" role="status">{notice}</p> : null}
      {open ? <NewJobDialog services={services} draft={null} onClose={() => setOpen(false)} onDone={setNotice} /> : null}
    </div>
  );
}
