/**
 * The soak's report from its samples file: growth after warm-up per process (RSS and heap after GC), the
 * curves, every sample in a table, and the API's RSS watched against unwatched. soak.ts calls it at the end;
 * run alone it rewrites the report of a finished run:
 *
 *   npx tsx soak/report.ts results/soak/samples.jsonl results/soak.json
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROLES = ["api", "worker", "dashboard"] as const;

export interface Sample {
  t: number;
  role: string;
  pid: number;
  /** Absent in samples of older samplers, which also ran in worker threads (their heap is the thread's). */
  main?: boolean;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  heapAfterGc: number | null;
}

export interface SoakRun {
  started: number;
  /** When the tabs closed and the dashboard stopped (the unwatched tail follows). */
  watchedUntil: number;
  elapsedSeconds: number;
  tabs: number;
  rate: number;
  warmupSeconds: number;
  adminBytes: { toService: number; fromService: number };
  tabCalls: number;
  accepted: number;
  failed: number;
}

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Main-thread samples only: an older sampler also reported from the worker's heartbeat thread (a heap of a few MB). */
function mainThread(samples: Sample[]): Sample[] {
  return samples.filter((s) => s.main === true || (s.main === undefined && s.heapTotal >= 16 * 1048576));
}

export function soakReport(all: Sample[], run: SoakRun) {
  const samples = mainThread(all).filter((s) => s.t >= run.started - 120_000);
  const api = samples.filter((s) => s.role === "api");
  const watchedRss = mean(api.filter((s) => s.t <= run.watchedUntil).slice(-4).map((s) => s.rss));
  const unwatchedRss = mean(api.filter((s) => s.t > run.watchedUntil + 60_000).map((s) => s.rss));
  const unwatched = { watchedRssMB: mb(watchedRss), unwatchedRssMB: mb(unwatchedRss), deltaMB: mb(watchedRss - unwatchedRss) };
  const byRole = Object.fromEntries(ROLES.map((role) => [role, samples.filter((s) => s.role === role && s.t <= run.watchedUntil).sort((a, b) => a.t - b.t)]));
  const heap = (s: Sample) => s.heapAfterGc ?? s.heapUsed;
  const growth = Object.fromEntries(
    ROLES.map((role) => {
      const after = byRole[role]!.filter((s) => s.t >= run.started + run.warmupSeconds * 1000);
      const first = after.slice(0, 3);
      const last = after.slice(-3);
      const pctOf = (pick: (s: Sample) => number) => Math.round(((mean(last.map(pick)) - mean(first.map(pick))) / mean(first.map(pick))) * 1000) / 10;
      const max = (pick: (s: Sample) => number) => mb(Math.max(...after.map(pick)));
      return [role, { rssFirstMB: mb(mean(first.map((s) => s.rss))), rssLastMB: mb(mean(last.map((s) => s.rss))), rssMaxMB: max((s) => s.rss), rssGrowthPct: pctOf((s) => s.rss), heapFirstMB: mb(mean(first.map(heap))), heapLastMB: mb(mean(last.map(heap))), heapMaxMB: max(heap), heapGrowthPct: pctOf(heap), samples: byRole[role]!.length }];
    }),
  );
  const minuteOf = (t: number) => ((t - run.started) / 60_000).toFixed(1);
  const rows = byRole.api!.map((a, i) => `| ${minuteOf(a.t)} | ${ROLES.map((role) => {
    const s = byRole[role]![i];
    return s ? `${mb(s.rss)} | ${mb(heap(s))}` : " | ";
  }).join(" | ")} |`);
  const chart = (role: string, pick: (s: Sample) => number) => {
    const series = byRole[role]!;
    const top = Math.max(...series.map(pick));
    // One line per 5 minutes, a bar scaled to the largest sample.
    return series
      .filter((_, i) => i % 10 === 0 || i === series.length - 1)
      .map((s) => `${minuteOf(s.t).padStart(5)} min ${"#".repeat(Math.max(1, Math.round((pick(s) / top) * 50))).padEnd(50)} ${mb(pick(s))} MB`)
      .join("\n");
  };
  const bytes = run.adminBytes.toService + run.adminBytes.fromService;
  const md = [
    `# Soak: ${Math.round(run.elapsedSeconds / 60)} minutes, ${run.tabs} dashboard tabs, ${run.rate} receipts/s (${new Date(run.started).toISOString()})`,
    "",
    `Admin traffic at the API: ${(bytes / run.elapsedSeconds / 1024).toFixed(1)} KB/s for ${run.tabs} tabs; ${run.tabCalls} tab calls; ${run.accepted} receipts accepted, ${run.failed} failed.`,
    "",
    `The API's RSS at the end, watched by ${run.tabs} tabs: ${unwatched.watchedRssMB} MB (mean of the last 4 samples); then nobody watching, from a minute after the dashboard stopped: ${unwatched.unwatchedRssMB} MB (${unwatched.deltaMB} MB apart).`,
    "",
    "| process | RSS after warm-up (MB) | at the end (MB) | largest (MB) | growth | heap after GC after warm-up (MB) | at the end (MB) | largest (MB) | growth |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...ROLES.map((r) => { const g = growth[r]!; return `| ${r} | ${g.rssFirstMB} | ${g.rssLastMB} | ${g.rssMaxMB} | ${g.rssGrowthPct} % | ${g.heapFirstMB} | ${g.heapLastMB} | ${g.heapMaxMB} | ${g.heapGrowthPct} % |`; }),
    "",
    ...ROLES.flatMap((r) => [`RSS of the ${r}:`, "```", chart(r, (s) => s.rss), "```", `Heap after GC of the ${r}:`, "```", chart(r, heap), "```", ""]),
    "| minute | API RSS | API heap | worker RSS | worker heap | dashboard RSS | dashboard heap |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
  return { md, growth, unwatched };
}

export async function readSamples(file: string): Promise<Sample[]> {
  return (await readFile(file, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Sample);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [samplesFile, runFile] = process.argv.slice(2);
  const run = JSON.parse(await readFile(runFile!, "utf8")) as SoakRun & { started: string | number; watchedUntil?: string | number };
  const started = new Date(run.started).getTime();
  const watchedUntil = run.watchedUntil ? new Date(run.watchedUntil).getTime() : started + run.elapsedSeconds * 1000;
  const report = soakReport(await readSamples(samplesFile!), { ...run, started, watchedUntil });
  await writeFile(path.join(path.dirname(runFile!), "soak.md"), report.md);
  console.log(report.md.split("\n").slice(0, 12).join("\n"));
}
