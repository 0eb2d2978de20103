import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createJfast, createLogger } from "@jfast/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceRoot, runJfast } from "./jfast-process.js";
import { PG_URL, sql } from "./services.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("jfast alerts", () => {
  it("lists a firing rule of jfast.toml with its delivered notification", { timeout: 120_000 }, async () => {
    const bodies: unknown[] = [];
    const server = createServer((request, response) => {
      let text = "";
      request.on("data", (c: Buffer) => (text += c.toString()));
      request.on("end", () => {
        bodies.push(JSON.parse(text));
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const webhook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/secret-path`;
    const schema = `jfast_cli_alerts_${randomUUID().slice(0, 8)}`;
    cleanups.push(() => sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    const service = await createServiceRoot({
      "jfast.toml": `[service]\nname = "ops"\n[plugins]\nenabled = ["database", "queue"]\n[plugin.database]\nurl = "${PG_URL}"\nschema = "${schema}"\n[plugin.queue]\nbackend = "postgres"\n\n[alerting]\ninterval = "100ms"\n\n[[alerts]]\nname = "no workers"\nrule = "workers_below"\nthreshold = 1\nwebhook = "${webhook}"\n`,
    });
    cleanups.push(service.remove);
    // No worker runs: the rule fires as soon as the evaluator of this process runs.
    const jfast = await createJfast({ root: service.root, logger: createLogger({ service: "ops", level: "silent" }) });
    await jfast.start();
    cleanups.push(() => jfast.stop());
    const deadline = Date.now() + 30_000;
    while (bodies.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(bodies).toEqual([expect.objectContaining({ alert: "no workers", state: "firing", value: 0, service: "ops" })]);

    const json = await runJfast(["alerts", "--json", "--root", service.root]);
    expect(json.code, json.stderr).toBe(0);
    const alerts = JSON.parse(json.stdout) as Array<Record<string, unknown> & { history: Array<Record<string, unknown>> }>;
    expect(alerts).toEqual([expect.objectContaining({ name: "no workers", rule: "workers_below", state: "firing", source: "config", webhook: webhook.replace("/hooks/secret-path", "/…") })]);
    expect(alerts[0]!.history).toEqual([expect.objectContaining({ state: "firing", delivery: "delivered", attempts: 1 })]);

    const table = await runJfast(["alerts", "--root", service.root]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/no workers\s+workers_below\s+service\s+1\s+5m\s+firing/);
    expect(table.stdout).toMatch(/no workers\s+firing\s+0\s+delivered\s+1/);
  });
});
