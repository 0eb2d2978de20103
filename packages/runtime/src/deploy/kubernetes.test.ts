import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { resolveConfig } from "../config/load-config.js";
import type { DeployService } from "./deploy-service.js";
import { generateKubernetes } from "./kubernetes.js";
import { toYaml } from "./yaml.js";

const billing: DeployService = {
  dir: "apps/example",
  config: resolveConfig({
    root: "/ws/apps/example",
    file: "/ws/apps/example/jfast.toml",
    data: { service: { name: "billing", base_port: 8000 }, plugins: { enabled: ["database", "queue", "kafka"] } },
    env: {},
  }),
};

async function manifestsOf(services: DeployService[]) {
  const { document, warnings } = generateKubernetes({ services, image: (name) => `registry.local/${name}:1.2.3` });
  const docs = parseAllDocuments(await toYaml(document)).map((d) => d.toJS() as any);
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
  return { docs, find, warnings };
}

describe("jfast deploy kubernetes", () => {
  it("runs the worker as its own Deployment with 30 s to finish on SIGTERM, no ports and no probes", async () => {
    const { find } = await manifestsOf([billing]);
    const worker = find("Deployment", "billing-worker");
    const pod = worker.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBe(30);
    expect(pod.containers).toHaveLength(1);
    const container = pod.containers[0];
    expect(container.image).toBe("registry.local/billing:1.2.3");
    expect(container.command).toEqual(["jfast", "worker"]);
    expect(container.ports).toBeUndefined();
    expect(container.readinessProbe).toBeUndefined();
    expect(container.livenessProbe).toBeUndefined();
    expect(worker.spec.selector.matchLabels).toEqual(worker.spec.template.metadata.labels);
  });

  it("serves the API from the same image, probed on /ready, behind a Service", async () => {
    const { find, warnings } = await manifestsOf([billing]);
    const api = find("Deployment", "billing");
    const container = api.spec.template.spec.containers[0];
    expect(container.image).toBe("registry.local/billing:1.2.3");
    expect(container.ports).toEqual([{ name: "http", containerPort: 8000 }]);
    expect(container.readinessProbe.httpGet).toEqual({ path: "/ready", port: "http" });
    expect(api.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
    const svc = find("Service", "billing");
    expect(svc.spec.ports).toEqual([{ name: "http", port: 8000, targetPort: "http" }]);
    expect(svc.spec.selector).toEqual(api.spec.template.metadata.labels);
    // The worker is not selected by the Service.
    expect(find("Deployment", "billing-worker").spec.template.metadata.labels).not.toEqual(svc.spec.selector);
    expect(warnings).toEqual(["create the Secret billing-env with DATABASE_URL, KAFKA_BROKERS before applying"]);
  });
});
