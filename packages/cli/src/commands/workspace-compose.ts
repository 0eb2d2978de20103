import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { generateCompose, toYaml } from "@jfast/runtime";
import { defineCommand, WORKSPACE_ROOT_FLAG } from "../command.js";
import { requireWorkspaceServices, resolveWorkspaceRoot, generatedHeader, reportWarnings } from "./deploy.js";

export default defineCommand({
  name: "workspace compose",
  summary: "generate one compose file for every service of the workspace",
  description: `
Finds every service of the workspace (the directories its package.json "workspaces" name that hold a
jfast.toml) and writes <workspace>/compose.yml (or prints it with --stdout): each service's API and, when
it has a queue, its worker, over one shared set of infrastructure containers published at the ports of the
service with the lowest base_port. Each service gets its own PostgreSQL database and its own Redis database
number; all of them talk to the one Kafka broker.`,
  flags: {
    stdout: { type: "boolean", description: "print instead of writing compose.yml" },
    root: WORKSPACE_ROOT_FLAG,
  },
  examples: ["jfast workspace compose", "jfast workspace compose --stdout > compose.yml"],
  docs: "jfast docs deploy#workspaces",
  async run({ flags, io }) {
    const workspace = resolveWorkspaceRoot(flags.root, io.cwd);
    const services = await requireWorkspaceServices(workspace, "jfast docs deploy#workspaces");
    const { document, warnings } = generateCompose({ services, project: await projectName(workspace) });
    reportWarnings(io, warnings);
    const sources = services.map((s) => `${s.dir}/jfast.toml`);
    const text = await toYaml(document, { header: generatedHeader("jfast workspace compose", sources) });
    if (flags.stdout) {
      io.out(text);
      return 0;
    }
    const file = path.join(workspace, "compose.yml");
    await writeFile(file, text);
    io.out(`wrote ${path.relative(io.cwd, file) || file} (${services.map((s) => s.config.service.name).join(", ")})\n`);
    return 0;
  },
});

/** The compose project: the workspace's package name (or directory), in the characters compose accepts. */
async function projectName(workspace: string): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(workspace, "package.json"), "utf8").catch(() => "{}")) as { name?: unknown };
  const raw = typeof manifest.name === "string" ? manifest.name.replace(/^@[^/]+\//, "") : path.basename(workspace);
  return raw.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[^a-z0-9]+/, "") || "workspace";
}
