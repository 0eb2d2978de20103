import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { resolveConfig } from "../config/load-config.js";
import { generateCompose } from "./compose.js";
import type { DeployService } from "./deploy-service.js";
import { generateKubernetes } from "./kubernetes.js";
import { toYaml } from "./yaml.js";

/**
 * What `jfast deploy compose` and `jfast deploy kubernetes` write, checked against the schemas the tools that read
 * them use: the Compose Specification's JSON schema (a copy under test/fixtures/schemas) and the Kubernetes
 * OpenAPI schemas of apps/v1 and v1. No Docker or cluster runs here; this is what `docker compose config` and
 * `kubectl apply --dry-run` would check first.
 */
// The schema names its draft by an https address Ajv does not know as draft-07's (which is Ajv's default).
const { $schema: _draft, ...composeSchema } = JSON.parse(readFileSync(new URL("../../test/fixtures/schemas/compose-spec.json", import.meta.url), "utf8")) as Record<string, unknown>;
const validateCompose = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(composeSchema);

const require = createRequire(import.meta.url);
type Model = new (data: unknown) => { validate(): void };
const KUBERNETES_MODELS: Record<string, Model> = {
  "apps/v1 Deployment": (require("kubernetes-models/apps/v1/Deployment") as { Deployment: Model }).Deployment,
  "v1 Service": (require("kubernetes-models/v1/Service") as { Service: Model }).Service,
  "v1 Secret": (require("kubernetes-models/v1/Secret") as { Secret: Model }).Secret,
  "v1 ConfigMap": (require("kubernetes-models/v1/ConfigMap") as { ConfigMap: Model }).ConfigMap,
};

function service(dir: string, data: Record<string, unknown>): DeployService {
  const config = resolveConfig({ root: `/ws/${dir}`, file: `/ws/${dir}/jfast.toml`, data, env: { REDIS_URL: "redis://redis:6379", AMQP_URL: "amqp://rabbitmq" } });
  return { config, dir };
}

const SERVICES = {
  "billing (PostgreSQL, outbox, Kafka, scheduler)": service("apps/example", {
    service: { name: "billing", base_port: 8000 },
    plugins: { enabled: ["database", "queue", "outbox", "kafka"] },
    plugin: { queue: { backend: "postgres", scheduler: true } },
  }),
  "shipping (Redis, Kafka)": service("apps/shipping", {
    service: { name: "shipping", base_port: 8100 },
    plugins: { enabled: ["queue", "kafka"] },
    plugin: { queue: { backend: "redis" } },
  }),
  "mail (RabbitMQ)": service("apps/mail", { service: { name: "mail", base_port: 8200 }, plugins: { enabled: ["queue"] }, plugin: { queue: { backend: "rabbitmq" } } }),
  "memo (memory queue)": service("apps/memo", { service: { name: "memo", base_port: 8300 }, plugins: { enabled: ["queue"] }, plugin: { queue: { backend: "memory" } } }),
};
const ALL = Object.values(SERVICES);

async function composeDocument(services: DeployService[]): Promise<unknown> {
  return parse(await toYaml(generateCompose({ services }).document, { header: "generated" }));
}

async function kubernetesDocuments(services: DeployService[]): Promise<Array<Record<string, unknown> & { apiVersion: string; kind: string }>> {
  const text = await toYaml(generateKubernetes({ services, image: (name) => `registry.local/${name}:1.2.3` }).document);
  return parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown> & { apiVersion: string; kind: string });
}

function composeErrors(document: unknown): string[] {
  return validateCompose(document) ? [] : (validateCompose.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

function kubernetesErrors(manifest: { apiVersion: string; kind: string }): string[] {
  const Model = KUBERNETES_MODELS[`${manifest.apiVersion} ${manifest.kind}`];
  if (!Model) return [`no schema here for ${manifest.apiVersion} ${manifest.kind}: add it to the test`];
  try {
    new Model(manifest).validate();
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

describe("deploy output against the schemas its readers use", () => {
  for (const [name, one] of Object.entries(SERVICES)) {
    it(`compose of ${name} is a valid Compose file`, async () => {
      expect(composeErrors(await composeDocument([one]))).toEqual([]);
    });
    it(`Kubernetes manifests of ${name} are valid for their API versions`, async () => {
      const manifests = await kubernetesDocuments([one]);
      expect(manifests.length).toBeGreaterThan(0);
      for (const manifest of manifests) expect({ kind: manifest.kind, errors: kubernetesErrors(manifest) }).toEqual({ kind: manifest.kind, errors: [] });
    });
  }

  it("the workspace's compose file and manifests (every service together) are valid", async () => {
    expect(composeErrors(await composeDocument(ALL))).toEqual([]);
    for (const manifest of await kubernetesDocuments(ALL)) expect(kubernetesErrors(manifest)).toEqual([]);
  });

  it("the checks refuse what the readers would refuse", async () => {
    const compose = (await composeDocument(ALL)) as { services: Record<string, Record<string, unknown>> };
    const [first] = Object.keys(compose.services);
    compose.services[first!]!.restart_policy_typo = "always";
    expect(composeErrors(compose).join("\n")).toMatch(/must NOT have additional properties/);
    const [deployment] = (await kubernetesDocuments(ALL)).filter((m) => m.kind === "Deployment");
    (deployment!.spec as Record<string, unknown>).replicas = "two";
    expect(kubernetesErrors(deployment!).join("\n")).toMatch(/replicas/);
  });
});
