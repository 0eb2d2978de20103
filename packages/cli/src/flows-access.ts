import type { FlowGetView, FlowListView, FlowView } from "@jfast/runtime";
import { CliError } from "./errors.js";

/** A view of flows that the service's queue cannot give (RabbitMQ), as the error the command prints. */
export function requireSupported<T extends FlowListView | FlowGetView>(view: T): T {
  if (view.supported) return view;
  throw new CliError(view.reason ?? "this service's queue keeps no flows", {
    code: "NOT_SUPPORTED",
    hint: "enable the database plugin for a RabbitMQ queue, or run flows on a PostgreSQL, PGlite or Redis queue",
    docs: "jfast docs flows#backends",
  });
}

/**
 * `jfast flows show --json`: `{ id, name, state, steps: { <name>: { state, jobId, after, result, error } } }` and
 * the rest of the flow; `result` and `error` are null when the step has none.
 */
export function flowJson(flow: FlowView): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (const [name, step] of Object.entries(flow.steps)) {
    const { name: _name, state, jobId, after, result, error, ...rest } = step;
    const shown = { state, jobId, after, result: "result" in step ? result : null, error: error ?? null, ...rest };
    Object.defineProperty(steps, name, { value: shown, enumerable: true, writable: true, configurable: true });
  }
  const { id, name, state, steps: _steps, ...rest } = flow;
  return { id, name, state, steps, ...rest };
}
