// The loopback clusters the runtime's tests start for themselves (docker/redis-cluster, docker/rabbitmq-cluster: a
// test file that needs one starts it) are stopped by the last test run that used them, never under a run still going.
// Each run registers its pid under $TMPDIR/jfast-test-runs: a vitest run (test/stop-started-clusters.ts, its global
// setup), or `hold` around several runs (npm test: the runtime's suites on Node 20, then on Node 24, share one start).
// A cluster down when a run begins is marked as the tests' own; when a run ends and no other registered run is alive,
// the marked clusters are stopped. A cluster started by hand before any run carries no mark and is left running.
// The machine's own PostgreSQL, Redis and RabbitMQ are never touched.
//
//   node scripts/test-clusters.mjs hold -- <command> [args…]   runs the command as one registered run
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const DOCKER = fileURLToPath(new URL("../../../docker/", import.meta.url));
const RUNS = path.join(process.env.TMPDIR ?? tmpdir(), "jfast-test-runs");
const CLUSTERS = [
  { name: "redis-cluster", port: Number(process.env.JFAST_REDIS_CLUSTER_PORT ?? 7001) },
  { name: "rabbitmq-cluster", port: Number(process.env.JFAST_RABBITMQ_CLUSTER_PORT ?? 5681) },
];

/** @param {number} port */
function answers(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    /** @param {boolean} up */
    const done = (up) => {
      socket.destroy();
      resolve(up);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.setTimeout(1000, () => done(false));
  });
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** @param {{ name: string; port: number }} cluster */
const mark = (cluster) => path.join(RUNS, `started-${cluster.name}-${cluster.port}`);

/** Registers a run; a cluster that is down now is the tests' own to stop once the last run ends. */
export async function beginRun(pid = process.pid) {
  mkdirSync(RUNS, { recursive: true });
  writeFileSync(path.join(RUNS, String(pid)), "");
  for (const cluster of CLUSTERS) if (!(await answers(cluster.port))) writeFileSync(mark(cluster), "");
}

/** Ends a run; the last one out stops the clusters the tests started. */
export async function endRun(pid = process.pid) {
  rmSync(path.join(RUNS, String(pid)), { force: true });
  for (const entry of readdirSync(RUNS)) {
    if (!/^\d+$/.test(entry)) continue;
    if (alive(Number(entry))) return;
    rmSync(path.join(RUNS, entry), { force: true });
  }
  for (const cluster of CLUSTERS) {
    if (!existsSync(mark(cluster))) continue;
    rmSync(mark(cluster), { force: true });
    if (await answers(cluster.port)) execFileSync("bash", [`${DOCKER}${cluster.name}/stop.sh`], { stdio: "inherit", timeout: 120_000 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [verb, separator, command, ...args] = process.argv.slice(2);
  if (verb !== "hold" || separator !== "--" || !command) {
    console.error("usage: node scripts/test-clusters.mjs hold -- <command> [args…]");
    process.exit(2);
  }
  await beginRun();
  const child = spawn(command, args, { stdio: "inherit" });
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => {
    child.on("error", (error) => {
      console.error(`test-clusters: ${command}: ${error.message}`);
      resolve(127);
    });
    child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
  await endRun();
  process.exit(code);
}
