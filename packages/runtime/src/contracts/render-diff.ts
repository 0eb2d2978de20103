import { renderDiffMermaid } from "./diff-mermaid.js";
import { isEmptyDiff, type ContractEdge, type ContractsDiff, type ContractsSide } from "./diff.js";
import { findingLocation, plural } from "./render.js";
import type { ContractFinding } from "./types.js";

/** One service's comparison: the two sides and their diff. `name` is null for a lone service. */
export interface ServiceContractsDiff {
  name: string | null;
  base: ContractsSide;
  head: ContractsSide;
  diff: ContractsDiff;
}

/** The first line of every comment `--md` prints, so a CI job can find and update its earlier comment. */
export const CONTRACTS_DIFF_MARKER = "<!-- jfast contracts diff -->";

/** `jfast contracts diff` for people: + and - edges, new and fixed violations, a summary line per service. */
export function formatContractsDiff(params: { ref: string; services: readonly ServiceContractsDiff[] }): string {
  const blocks: string[] = [];
  for (const { name, diff } of params.services) {
    const label = name ? `${name}: ` : "";
    if (isEmptyDiff(diff)) {
      blocks.push(`${label}no contract changes against ${params.ref}`);
      continue;
    }
    const lines: string[] = name ? [name] : [];
    for (const e of diff.added) lines.push(`+ ${edgeText(e)}`);
    for (const e of diff.removed) lines.push(`- ${edgeText(e)}`);
    if (diff.added.length + diff.removed.length) lines.push("");
    for (const f of diff.newViolations) {
      lines.push(`new violation  ${findingLocation(f)}  ${f.rule}  [${f.module}] ${f.subject}`, `  ${f.message}`, `  fix: ${f.fix}`, "");
    }
    for (const f of diff.fixedViolations) lines.push(`fixed  ${f.rule}  [${f.module}] ${f.subject}`);
    if (diff.fixedViolations.length) lines.push("");
    for (const p of diff.payloads ?? []) {
      lines.push(`payload ${p.class.padEnd(10)}  ${p.kind} ${p.name} (${p.change})`);
      for (const f of p.fields) lines.push(`  ${f.breaking ? "!" : " "} ${f.path}: ${f.change}`);
    }
    if (diff.payloads?.length) lines.push("");
    if (diff.payloadsNotCompared) lines.push(`payload schemas not compared: ${diff.payloadsNotCompared}`, "");
    lines.push(`${label}${summary(diff)} against ${params.ref}`);
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n\n");
}

/**
 * `jfast contracts diff --md`: a pull-request comment with a summary, the changed edges, new and fixed
 * violations and a Mermaid diagram of the part of the graph the change touches.
 */
export function renderContractsDiffMarkdown(params: { ref: string; services: readonly ServiceContractsDiff[] }): string {
  const changed = params.services.filter((s) => !isEmptyDiff(s.diff));
  const newViolations = params.services.reduce((n, s) => n + s.diff.newViolations.length, 0);
  const breaking = params.services.reduce((n, s) => n + (s.diff.payloads ?? []).filter((p) => p.class === "breaking").length, 0);
  const out = [CONTRACTS_DIFF_MARKER, "## Contract changes", ""];
  if (changed.length === 0) {
    out.push(`No contract changes against \`${params.ref}\`.`);
    return out.join("\n") + "\n";
  }
  out.push(
    newViolations > 0
      ? `:x: This change adds ${plural(newViolations, "contract violation")} (compared with \`${params.ref}\`).`
      : `:white_check_mark: No new contract violations (compared with \`${params.ref}\`).`,
    "",
  );
  if (breaking > 0) out.push(`:warning: ${plural(breaking, "payload schema")} changed in a breaking way: jobs already waiting may be refused (\`jfast jobs check-payloads\` counts them).`, "");
  for (const service of params.services) {
    const { diff } = service;
    const heading = service.name ? `### ${service.name}` : null;
    if (isEmptyDiff(diff)) {
      if (heading) out.push(heading, "", "No contract changes.", "");
      continue;
    }
    if (heading) out.push(heading, "");
    out.push(`**${summary(diff)}**`, "");
    if (diff.added.length + diff.removed.length) {
      out.push("| | Edge | From | To |", "| --- | --- | --- | --- |");
      for (const e of diff.added) out.push(`| added | ${e.kind} | \`${e.from}\` | \`${e.to}\` |`);
      for (const e of diff.removed) out.push(`| removed | ${e.kind} | \`${e.from}\` | \`${e.to}\` |`);
      out.push("");
    }
    if (diff.newViolations.length) {
      out.push("New violations:", "");
      for (const f of diff.newViolations) out.push(findingItem(f), `  - fix: ${escapeMarkdown(f.fix)}`);
      out.push("");
    }
    if (diff.fixedViolations.length) {
      out.push("Fixed violations:", "");
      for (const f of diff.fixedViolations) out.push(findingItem(f));
      out.push("");
    }
    if (diff.payloads?.length) {
      out.push("Payload schemas:", "", "| | Payload of | Field | Change |", "| --- | --- | --- | --- |");
      for (const p of diff.payloads) {
        for (const f of p.fields) out.push(`| ${f.breaking ? ":warning: breaking" : "compatible"} | ${p.kind} \`${p.name}\` | \`${f.path}\` | ${escapeMarkdown(f.change)} |`);
      }
      out.push("");
    }
    if (diff.payloadsNotCompared) out.push(`Payload schemas not compared: ${escapeMarkdown(diff.payloadsNotCompared)}`, "");
    const diagram = renderDiffMermaid(service);
    if (diagram) out.push("```mermaid", diagram, "```", "");
  }
  out.push("<sub>`jfast contracts diff` — jfast docs contracts</sub>");
  return out.join("\n") + "\n";
}

function summary(diff: ContractsDiff): string {
  const payloads = diff.payloads ?? [];
  const breaking = payloads.filter((p) => p.class === "breaking").length;
  return [
    `${plural(diff.added.length, "edge")} added`,
    `${diff.removed.length} removed`,
    plural(diff.newViolations.length, "new violation"),
    `${diff.fixedViolations.length} fixed`,
    ...(payloads.length ? [`${plural(payloads.length, "payload schema")} changed (${breaking} breaking)`] : []),
  ].join(", ");
}

function edgeText(e: ContractEdge): string {
  return `${e.kind.padEnd(10)}  ${e.from} → ${e.to}`;
}

function findingItem(f: ContractFinding): string {
  return `- **${f.rule}** in \`${f.module}\`, \`${f.subject}\` (\`${findingLocation(f)}\`): ${escapeMarkdown(f.message)}`;
}

/** Fixes name placeholders such as "<topic>" and names with underscores; keep them literal in the comment. */
function escapeMarkdown(text: string): string {
  return text.replace(/</g, "&lt;").replace(/([_*])/g, "\\$1");
}
