/** `jfast worker` processes under test: spawned from the CLI's bin, killed with SIGKILL, restarted. */
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
  /** When the current process was spawned (a fresh one needs seconds to load the service before it claims). */
  startedAt = 0;

  constructor(
    private readonly root: string,
    readonly name: string,
  ) {}

  start(): void {
    this.stderr = "";
    this.startedAt = Date.now();
    const child = spawn(process.execPath, [BIN, "worker", "--root", this.root, "--concurrency", "8", "--grace", "2"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: process.env,
    });
    child.stderr!.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)));
    child.on("exit", (code, signal) => {
      if (!this.expected.has(child)) this.crashes.push(`${this.name} exited by itself (code ${code}, signal ${signal}): ${this.stderr.trim().slice(-600)}`);
      if (this.child === child) this.child = null;
    });
    this.child = child;
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  kill9(): void {
    if (!this.child) return;
    this.expected.add(this.child);
    this.child.kill("SIGKILL");
    this.child = null;
  }

  /** SIGTERM, then SIGKILL if it has not gone within the grace. */
  async stop(): Promise<void> {
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
