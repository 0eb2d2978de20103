import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { REPO_ROOT } from "./jfast-process.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function workspace(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-workspace-check-"));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

async function jfast(args: string[], cwd = REPO_ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { out: (t) => void (stdout += t), err: (t) => void (stderr += t), cwd });
  return { code, stdout, stderr };
}

/** Orders publishes order.placed to its "orders" topic through the outbox; billing handles the topic. */
const ORDERS = {
  "apps/orders/jfast.toml": `[service]\nname = "orders"\n`,
  "apps/orders/contracts.toml": `[modules.order]\npublishes = ["order.placed"]\n`,
  "apps/orders/modules/order/place.ts": `import { Event } from "@jfast/runtime";\nexport async function place(tx: unknown, outbox: { publish(...a: unknown[]): Promise<void> }) {\n  const placed = new Event({ type: "order.placed", data: {} });\n  await outbox.publish(tx, "orders", placed);\n}\n`,
};
const billing = (type: string) => ({
  "apps/billing/jfast.toml": `[service]\nname = "billing"\n`,
  "apps/billing/contracts.toml": `[modules.invoice]\n`,
  "apps/billing/modules/invoice/tasks.ts": `import { on } from "@jfast/runtime";\nexport const draft = on("orders", async (event) => {\n  if (event.type !== "${type}") return;\n});\n`,
});

describe("jfast workspace contracts check", () => {
  it("joins a handler in one service to the topic another publishes to, and flags a type nobody publishes there", async () => {
    const root = await workspace({ "package.json": JSON.stringify({ private: true, workspaces: ["apps/*"] }), ...ORDERS, ...billing("order.placd") });
    const text = await jfast(["workspace", "contracts", "check", "--root", root]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toContain("orphan-kafka-event  [billing/invoice]");
    expect(text.stdout).toContain(`billing's invoice handles "order.placd" on the Kafka topic "orders", which no service of the workspace publishes there`);
    expect(text.stdout).toContain(`fix: did you mean "order.placed"?`);

    await writeFile(path.join(root, "apps/billing/modules/invoice/tasks.ts"), billing("order.placed")["apps/billing/modules/invoice/tasks.ts"]);
    const clean = await jfast(["workspace", "contracts", "check", "--json"], root);
    expect(clean.code, clean.stdout).toBe(0);
    const { services, crossService, graph } = JSON.parse(clean.stdout);
    expect(services.map((s: { service: string; dir: string }) => [s.service, s.dir])).toEqual([["billing", "apps/billing"], ["orders", "apps/orders"]]);
    expect(crossService).toEqual([]);
    const kafka = graph.edges.filter((e: { kind: string }) => e.kind === "produces" || e.kind === "consumes").map((e: { from: string; to: string }) => `${e.from} -> ${e.to}`);
    expect(kafka.sort()).toEqual(["module:orders/order -> topic:orders/order.placed", "topic:orders/order.placed -> module:billing/invoice"]);
  });

  it("says the example workspace's services are joined over Kafka without a violation", async () => {
    const result = await jfast(["workspace", "contracts", "check"]);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/across services: ok, 3 event types on Kafka topics, 2 handler links to a module/);
  });
});
