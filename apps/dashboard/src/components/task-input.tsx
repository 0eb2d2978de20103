"use client";
import { useQueries } from "@tanstack/react-query";
import { useId } from "react";
import { useTRPC } from "~/trpc/provider";

/**
 * A task filter that suggests the task names the services register (overview.tasks, a datalist the browser
 * offers as the person types), with one of them as the example. A service on an older runtime without the
 * procedure suggests nothing; the field still takes any name.
 */
export function TaskInput({ services, value, onChange }: { services: string[]; value: string; onChange: (task: string) => void }) {
  const trpc = useTRPC();
  const list = `${useId()}-tasks`;
  const answers = useQueries({
    queries: services.map((s) => trpc(s).overview.tasks.queryOptions(undefined, { staleTime: 60_000, refetchInterval: false })),
  });
  const tasks = [...new Set(answers.flatMap((a) => a.data?.tasks ?? []))].sort();
  // Subscribers' tasks ("event->module.handler") are real names too, but a plain task makes the better example.
  const example = tasks.find((t) => !t.includes("->")) ?? tasks[0];
  return (
    <>
      <input className="input" list={list} value={value} onChange={(e) => onChange(e.target.value)} placeholder={example ? `e.g. ${example}` : "any task"} autoComplete="off" />
      <datalist id={list} data-task-suggestions>
        {tasks.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
    </>
  );
}
