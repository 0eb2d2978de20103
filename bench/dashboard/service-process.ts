/** The benchmark's service (service.mjs) in a child process, with a root of its own and a PostgreSQL schema. */
import { spawn } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TASKS } from "./seed.js";

export interface ServiceProcess {
  url: string;
  /** The service's process id (its memory is read from /proc/<pid>/status). */
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

/** jfast.toml, contracts.toml and the modules: every seeded task registered, one nightly schedule, an outbox. */
export async function writeServiceRoot(params: { root: string; databaseUrl: string; schema: string }): Promise<void> {
  const { root } = params;
  await mkdir(path.join(root, "modules", "billing"), { recursive: true });
  await mkdir(path.join(root, "modules", "alert"), { recursive: true });
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "billing"\nenvironment = "production"\n\n[plugins]\nenabled = ["database", "queue", "outbox"]\n\n` +
      `[plugin.database]\nurl = "${params.databaseUrl}"\nschema = "${params.schema}"\n\n` +
      `[plugin.queue]\nbackend = "postgres"\nscheduler = true\n\n[admin]\nredact = ["card_number"]\n`,
  );
  await writeFile(path.join(root, "contracts.toml"), `[modules.billing]\npublishes = ["receipt.registered"]\n\n[modules.alert]\ndepends_on = []\n`);
  const tasks = TASKS.map((name) => `export const ${name.split(".")[1]} = task("${name}", async () => {});`).join("\n");
  await writeFile(
    path.join(root, "modules", "billing", "tasks.mjs"),
    `import { schedule, task } from "@jfast/runtime";\n\n${tasks}\n\nexport const nightly = schedule("billing.sync", { cron: "30 3 * * *", timezone: "UTC", name: "nightly-sync", catchUp: false });\n`,
  );
  await writeFile(path.join(root, "modules", "alert", "tasks.mjs"), `import { subscribe } from "@jfast/runtime";\n\nexport const checkBudget = subscribe("receipt.registered", async () => {});\n`);
}

export async function startServiceProcess(params: { root: string; port: number; tokens: string }): Promise<ServiceProcess> {
  let output = "";
  const child = spawn(process.execPath, [fileURLToPath(new URL("./service.mjs", import.meta.url))], {
    cwd: params.root,
    env: { ...process.env, FIXTURE_ROOT: params.root, PORT: String(params.port), JFAST_ADMIN_TOKENS: params.tokens, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${params.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the benchmark service exited with ${child.exitCode} before it was ready:\n${output}`);
    const status = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status, () => 0);
    if (status === 200 || status === 503) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the benchmark service did not answer /ready within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: child.pid!,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(params.root, { recursive: true, force: true });
    },
  };
}
