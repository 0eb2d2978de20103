import type { FlowView } from "@jfast/runtime";
import { defineCommand, ROOT_FLAG } from "../command.js";
import { UsageError } from "../errors.js";
import { flowJson, requireSupported } from "../flows-access.js";
import { formatTable, oneLine } from "../format/table.js";
import { withQueue } from "../queue-access.js";
import { cliActor } from "../repairs.js";
import { resolveRoot } from "../service.js";

export default defineCommand({
  name: "flows show",
  summary: "print one flow: its state and each step's state, job, the steps it runs after, result or error",
  description: `
Prints one flow as the admin API's flows.get shows it: its state (running, completed, failed, cancelled), then
each step: its state, the steps it runs after, its job id (jfast jobs show <job id> prints the job), attempts,
how long its last attempt ran, and its result or last error. Results are redacted as the admin API redacts payloads. --json prints
{ id, name, state, steps: { <step>: { state, jobId, after, result, error, … } }, … }. Exit code 1 when no flow
has that id. See jfast docs flows and jfast docs cli#jfast-flows.`,
  flags: {
    json: { type: "boolean", description: "print the flow as JSON" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "id", description: "the flow's id" }],
  examples: ["jfast flows show 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e", "jfast flows show 0193c9a4-6b1e-7c55-9d0e-2f4b8a1c3d5e --json | jq .steps.ship"],
  docs: "jfast docs flows",
  async run({ flags, positionals, io }) {
    if (positionals.length !== 1) throw new UsageError("give exactly one flow id: jfast flows show <id>");
    const id = positionals[0]!;
    const view = await withQueue(resolveRoot(flags.root, io.cwd), async (_backend, jfast) => requireSupported(await (await jfast.repairs(cliActor())).getFlow(id)));
    if (!view.flow) {
      io.err(`jfast: no flow with id ${id}\n`);
      return 1;
    }
    io.out(flags.json ? `${JSON.stringify(flowJson(view.flow), null, 2)}\n` : formatFlow(view.flow));
    return 0;
  },
});

function formatFlow(flow: FlowView): string {
  const fields: [string, string | null][] = [
    ["id", flow.id],
    ["name", flow.name],
    ["kind", flow.kind],
    ["state", `${flow.state} (${flow.completed} of ${flow.total} steps completed${flow.dead > 0 ? `, ${flow.dead} dead` : ""})`],
    ["queue", flow.queue],
    ["tenant", flow.tenantId],
    ["created", flow.createdAt],
    ["finished", flow.finishedAt],
  ];
  const head = fields.filter(([, value]) => value !== null).map(([label, value]) => `${label.padEnd(10)}${value}`);
  const rows = Object.values(flow.steps).map((step) => [
    step.name,
    step.state,
    step.after.join(", ") || "-",
    step.jobId,
    String(step.attempts),
    step.durationMs === undefined ? "" : formatMs(step.durationMs),
    step.error ? oneLine(`${step.error.class}: ${step.error.message}`, 100) : "result" in step ? oneLine(JSON.stringify(step.result) ?? "", 100) : "",
  ]);
  return `${head.join("\n")}\n\n${formatTable(["STEP", "STATE", "AFTER", "JOB", "ATTEMPTS", "DURATION", "RESULT OR ERROR"], rows)}`;
}

/** A step's duration (docs/jobs.md#timing): `850 ms`, `12.3 s`. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms * 10) / 10} ms` : `${(ms / 1000).toFixed(1)} s`;
}
