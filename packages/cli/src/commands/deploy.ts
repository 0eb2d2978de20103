import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  generateCompose,
  generateKubernetes,
  loadDeployService,
  SERVICE_DOCKERIGNORE,
  serviceDockerfile,
  toYaml,
  type DeployService,
} from "@jfast/runtime";
import { defineCommand, ROOT_FLAG, type CommandIO } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { resolveRoot } from "../service.js";

const TARGETS = ["compose", "kubernetes"] as const;

export default defineCommand({
  name: "deploy",
  summary: "generate a compose file or Kubernetes manifests for the service",
  description: `
compose: writes <root>/compose.yml (or prints it with --stdout). Each enabled plugin brings its container:
PostgreSQL at base_port + 1 for the database plugin (the postgres queue reuses it), Redis at + 3 for the
redis queue, RabbitMQ at + 6 with its management UI at + 7, Kafka at + 2 (or [plugin.kafka] host_port) in
KRaft mode with an internal and an external listener. The service runs its API; a "<name>-worker" beside it
runs \`jfast worker\` from the same image, with no ports and 30 s to finish on SIGTERM. A service in an npm
workspace builds from docker/Dockerfile at the workspace root (SERVICE_DIR names the service); a service on
its own builds from <root>/Dockerfile, which is written (with a .dockerignore) when it has none: production
dependencies, the binary on PATH, \`jfast start\` by default.

kubernetes: prints Deployments and a Service for the API and a worker Deployment with
terminationGracePeriodSeconds: 30. URLs come from a Secret "<name>-env" (listed on stderr).

For several services at once, see \`jfast workspace compose\`.`,
  flags: {
    stdout: { type: "boolean", description: "print instead of writing compose.yml (kubernetes always prints)" },
    image: { type: "string", placeholder: "IMAGE", description: "kubernetes: the service image (default: <name>:latest)" },
    namespace: { type: "string", placeholder: "NS", description: "kubernetes: metadata.namespace of every object" },
    root: ROOT_FLAG,
  },
  positionals: [{ name: "target", description: "compose | kubernetes" }],
  examples: ["jfast deploy compose --stdout", "jfast deploy compose --root apps/example", "jfast deploy kubernetes --image registry.local/billing:1.4.0 > k8s.yml"],
  docs: "jfast docs deploy",
  async run({ flags, positionals, io }) {
    const target = positionals[0];
    if (positionals.length !== 1 || !TARGETS.includes(target as (typeof TARGETS)[number])) {
      throw new UsageError(`say what to generate: jfast deploy ${TARGETS.join(" | ")}${target ? ` (got "${positionals.join(" ")}")` : ""}`);
    }
    const root = resolveRoot(flags.root, io.cwd);
    const workspace = findWorkspaceRoot(root);
    const service = await loadDeployService({ root, workspaceRoot: workspace });
    const source = path.relative(workspace, path.join(root, "jfast.toml")) || "jfast.toml";

    if (target === "kubernetes") {
      const { document, warnings } = generateKubernetes({
        services: [service],
        ...(flags.image ? { image: () => flags.image! } : {}),
        ...(flags.namespace ? { namespace: flags.namespace } : {}),
      });
      reportWarnings(io, warnings);
      io.out(await toYaml(document, { header: generatedHeader("jfast deploy kubernetes", [source]) }));
      return 0;
    }
    // A service in an npm workspace builds from the workspace root with its docker/Dockerfile; a service on
    // its own builds from its directory with <root>/Dockerfile, written when it has none.
    const inWorkspace = workspace !== root;
    const { document, warnings } = generateCompose({
      services: [service],
      ...(inWorkspace
        ? { context: path.relative(root, workspace).split(path.sep).join("/") || "." }
        : { context: ".", dockerfile: "Dockerfile" }),
    });
    reportWarnings(io, warnings);
    const text = await toYaml(document, { header: generatedHeader("jfast deploy compose", [source]) });
    const dockerfile = inWorkspace ? path.join(workspace, "docker", "Dockerfile") : path.join(root, "Dockerfile");
    const missingDockerfile = !existsSync(dockerfile);
    const shown = path.relative(io.cwd, dockerfile) || dockerfile;
    if (missingDockerfile && (inWorkspace || flags.stdout)) {
      io.err(
        inWorkspace
          ? `jfast: note: the compose file builds ${shown} (build arg SERVICE_DIR=${service.dir}), which does not exist: provide it (jfast docs deploy#the-image)\n`
          : `jfast: note: the compose file builds ${shown}, which does not exist: run \`jfast deploy compose\` without --stdout to write one (jfast docs deploy#the-image)\n`,
      );
    }
    if (flags.stdout) {
      io.out(text);
      return 0;
    }
    const written: string[] = [];
    if (missingDockerfile && !inWorkspace) {
      await writeFile(dockerfile, serviceDockerfile({ serviceName: service.config.service.name }));
      written.push(dockerfile);
      const ignore = path.join(root, ".dockerignore");
      if (!existsSync(ignore)) {
        await writeFile(ignore, SERVICE_DOCKERIGNORE);
        written.push(ignore);
      }
    }
    const file = path.join(root, "compose.yml");
    await writeFile(file, text);
    written.push(file);
    for (const each of written) io.out(`wrote ${path.relative(io.cwd, each) || each}\n`);
    return 0;
  },
});

export function generatedHeader(command: string, sources: string[]): string {
  return `Generated by \`${command}\` from ${sources.join(", ")}.\nRegenerate it after changing jfast.toml instead of editing it. See jfast docs deploy.`;
}

export function reportWarnings(io: CommandIO, warnings: readonly string[]): void {
  for (const warning of warnings) io.err(`jfast: warning: ${warning}\n`);
}

/** The workspace a `jfast workspace` command works on: its --root, else the nearest one above `cwd`. */
export function resolveWorkspaceRoot(root: string | undefined, cwd: string): string {
  return root ? path.resolve(cwd, root) : findWorkspaceRoot(cwd);
}

/** The nearest directory above `start` whose package.json declares npm workspaces; `start` itself if none. */
export function findWorkspaceRoot(start: string): string {
  let dir = start;
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        const json = JSON.parse(readFileSync(manifest, "utf8")) as { workspaces?: unknown };
        if (json.workspaces) return dir;
      } catch {
        // not a readable package.json: keep looking
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
}

/** Every service of a workspace: directories matched by its package.json workspaces ("apps/*") holding jfast.toml. */
/** The workspace's services, or NO_SERVICES naming where to run the command (`docs`: the command's page). */
export async function requireWorkspaceServices(workspace: string, docs: string): Promise<DeployService[]> {
  const services = await findWorkspaceServices(workspace);
  if (services.length > 0) return services;
  throw new CliError(`no services found in the workspace at ${workspace}`, {
    code: "NO_SERVICES",
    hint: `run it at the workspace root (its package.json lists "workspaces" such as "apps/*"), where service directories hold jfast.toml`,
    docs,
  });
}

export async function findWorkspaceServices(workspace: string): Promise<DeployService[]> {
  const manifest = JSON.parse(await readFile(path.join(workspace, "package.json"), "utf8").catch(() => "{}")) as { workspaces?: unknown };
  const patterns = Array.isArray(manifest.workspaces) ? (manifest.workspaces as string[]) : ["apps/*"];
  const roots = new Set<string>();
  for (const pattern of patterns) {
    if (pattern.endsWith("/*")) {
      const parent = path.join(workspace, pattern.slice(0, -2));
      const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) if (entry.isDirectory()) roots.add(path.join(parent, entry.name));
    } else {
      roots.add(path.join(workspace, pattern));
    }
  }
  const services: DeployService[] = [];
  for (const root of [...roots].sort()) {
    if (existsSync(path.join(root, "jfast.toml"))) services.push(await loadDeployService({ root, workspaceRoot: workspace }));
  }
  // The lowest base port first: the shared infrastructure is published at its ports.
  return services.sort((a, b) => a.config.service.basePort - b.config.service.basePort || a.config.service.name.localeCompare(b.config.service.name));
}
