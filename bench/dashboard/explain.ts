/**
 * EXPLAIN (ANALYZE, BUFFERS) of the SQL behind the admin views, read from the runtime's sources so the plans are
 * those of the statements the service runs. TIMING OFF: timing every row of a million-entry index scan would
 * add more than the scan costs; the execution time stays, per-node times are not needed here. A summary per statement: planning and execution time (median of
 * three runs), buffers, the scans it used and whether any was a sequential scan of jfast_jobs.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";

export interface ExplainCase {
  label: string;
  /** Path under packages/runtime/src. */
  file: string;
  params: unknown[];
}

export interface ExplainSummary {
  label: string;
  file: string;
  planningMs: number;
  executionMs: number;
  sharedHit: number;
  sharedRead: number;
  scans: string[];
  seqScanOfJobs: boolean;
  rows: number;
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (n: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

export async function explain(client: pg.Client, runtimeSrc: string, c: ExplainCase): Promise<ExplainSummary> {
  const sql = readFileSync(path.join(runtimeSrc, c.file), "utf8");
  const runs: { planning: number; execution: number; plan: PlanNode }[] = [];
  for (let i = 0; i < 3; i++) {
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${sql}`, c.params);
    const [out] = rows[0]["QUERY PLAN"] as [{ Plan: PlanNode; "Planning Time": number; "Execution Time": number }];
    runs.push({ planning: out["Planning Time"], execution: out["Execution Time"], plan: out.Plan });
  }
  runs.sort((a, b) => a.execution - b.execution);
  const median = runs[1]!;
  const scans = new Set<string>();
  let seqScanOfJobs = false;
  walk(median.plan, (n) => {
    // A bitmap heap scan is named by the index scan under it.
    if (n["Index Name"]) scans.add(`${n["Node Type"]} ${n["Index Name"]}`);
    else if (n["Node Type"] !== "Bitmap Heap Scan" && n["Node Type"].includes("Scan") && n["Relation Name"]) scans.add(`${n["Node Type"]} ${n["Relation Name"]}`);
    if (n["Node Type"] === "Seq Scan" && n["Relation Name"] === "jfast_jobs") seqScanOfJobs = true;
  });
  return {
    label: c.label,
    file: c.file,
    planningMs: median.planning,
    executionMs: median.execution,
    sharedHit: median.plan["Shared Hit Blocks"] ?? 0,
    sharedRead: median.plan["Shared Read Blocks"] ?? 0,
    scans: [...scans],
    seqScanOfJobs,
    rows: median.plan["Actual Rows"] ?? 0,
  };
}
