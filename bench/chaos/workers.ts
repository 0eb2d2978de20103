/**
 * `jfast worker` processes under test: spawned from the CLI's bin, killed with SIGKILL, restarted.
 *
 * A worker that refuses to start because its broker is down at that moment (exit 1 before it logged
 * "worker started": the restart of the broker landed on the start-up of a worker just restarted after a kill)
 * is started again half a second later, as a supervisor (systemd, Kubernetes, compose `restart:`) would do; that
 * is counted in `startRefusals`, not as a crash. An exit of a worker that was running is a crash.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const BIN = path.resolve(new URL("../../packages/cli/bin/jfast.js", import.meta.url).pathname);

export class WorkerProcess {
  private child: ChildProcess | null = null;
  /** Exits that nobody asked for (a crash), with their code and the tail of stderr. */
  readonly crashes: string[] = [];
  /** Processes we killed or stopped ourselves: their exit is not a crash (it may arrive after a restart). */
  private readonly expected = new WeakSet<ChildProcess>();
  private stderr = "";
  /** The messages of its warnings and errors, across restarts (the last 500), e.g. the heartbeat thread's. */
  readonly warnings: string[] = [];
  /** How many warnings and errors it logged in all (the list keeps the last 500). */
  warningCount = 0;
  /** Start-ups refused while the broker was down, each followed by a supervisor-style restart. */
  readonly startRefusals: string[] = [];
  private stopped = false;
  /** When the current process was spawned (a fresh one needs seconds to load the service before it claims). */
  startedAt = 0;
  /** The current process logged "worker started" (it claims). */
  running = false;

  /** Environment for the process (engine URLs through this worker's proxy); `nodeArgs` go before the CLI (a preload). */
  env: Record<string, string> = {};
  nodeArgs: string[] = [];

  constructor(
    private readonly root: string,
    readonly name: string,
  ) {}

  /** The warnings and errors logged since `count` was read from warningCount. */
  warningsSince(count: number): string[] {
    return this.warnings.slice(Math.max(0, this.warnings.length - (this.warningCount - count)));
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): void {
    this.stderr = "";
    this.stopped = false;
    this.startedAt = Date.now();
    const child = spawn(process.execPath, [...this.nodeArgs, BIN, "worker", "--root", this.root, "--concurrency", "8", "--grace", "2"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...this.env },
    });
    let running = false;
    this.running = false;
    let stdoutTail = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      if (running) return;
      stdoutTail = (stdoutTail + chunk.toString()).slice(-2000);
      if (stdoutTail.includes('"msg":"worker started"')) running = this.running = true;
    });
    let partial = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const msg = /"level":"(?:warn|error)".*?"msg":"([^"]*)"/.exec(line)?.[1];
        if (msg === undefined) continue;
        this.warnings.push(msg);
        this.warningCount++;
        if (this.warnings.length > 500) this.warnings.shift();
      }
      // The logger writes to stderr; a CLI build that prints to stdout is read above.
      if (!running && this.stderr.includes('"msg":"worker started"')) running = this.running = true;
    });
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.expected.has(child)) return;
      const reason = this.stderr.trim().slice(-600);
      if (!running && code === 1 && /cannot use|cannot reach|unreachable|ECONNREFUSED|UNAVAILABLE/i.test(reason)) {
        this.startRefusals.push(reason.split("\n")[0] ?? reason);
        setTimeout(() => {
          if (!this.stopped && this.child === null) this.start();
        }, 500);
        return;
      }
      this.crashes.push(`${this.name} exited by itself (code ${code}, signal ${signal}${running ? ", while running" : ", during start-up"}): ${reason}`);
    });
    this.child = child;
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** When it was last killed with -9 (0: never): a scenario that reads the workers' logs waits for its sweep. */
  killedAt = 0;

  /** SIGKILL; returns the pid it killed. */
  kill9(): number | null {
    if (!this.child) return null;
    const pid = this.child.pid ?? null;
    this.killedAt = Date.now();
    this.expected.add(this.child);
    this.child.kill("SIGKILL");
    this.child = null;
    return pid;
  }

  /** Resolves once the current process claims (logged "worker started"), or rejects after `timeoutMs`. */
  async waitRunning(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.running) {
      if (Date.now() > deadline) throw new Error(`${this.name} did not start within ${timeoutMs} ms: ${this.stderr.slice(-600)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM, then SIGKILL if it has not gone within the grace. */
  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child) return;
    this.expected.add(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
    await gone;
    clearTimeout(timer);
    this.child = null;
  }
}
