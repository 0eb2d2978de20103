import { hasQueue, workerName, workspaceWarnings, type DeployService, type Generated } from "./deploy-service.js";
import { WORKER_GRACE_SECONDS } from "./ports.js";

/**
 * `jfast deploy kubernetes`: per service a Deployment and a Service for the HTTP API (readiness on /ready)
 * and, when it has a queue, a worker Deployment from the same image running `jfast worker`, with no ports and
 * no HTTP probes and `terminationGracePeriodSeconds: 30` so SIGTERM lets running jobs finish. The
 * infrastructure (PostgreSQL, Redis, RabbitMQ, Kafka) is the cluster's: URLs come from a Secret named
 * `<service>-env`, which the warnings list.
 */
export interface KubernetesParams {
  services: readonly DeployService[];
  /** The image of a service (default `<name>:latest`). */
  image?: (service: string) => string;
  namespace?: string;
  replicas?: { api?: number; worker?: number };
}

export type Manifest = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } };

export function generateKubernetes(params: KubernetesParams): Generated<Manifest[]> {
  const warnings = workspaceWarnings(params.services);
  const manifests: Manifest[] = [];
  for (const service of params.services) {
    const { config } = service;
    const name = config.service.name;
    const image = params.image?.(name) ?? `${name}:latest`;
    const port = config.service.basePort;
    const secret = `${name}-env`;
    const keys = secretKeys(service);
    if (keys.length > 0) warnings.push(`create the Secret ${secret} with ${keys.join(", ")} before applying`);
    const envFrom = [{ secretRef: { name: secret, optional: keys.length === 0 } }];
    const metadata = (component: string, objectName: string) => ({
      name: objectName,
      ...(params.namespace ? { namespace: params.namespace } : {}),
      labels: { "app.kubernetes.io/name": name, "app.kubernetes.io/component": component, "app.kubernetes.io/part-of": "jfast" },
    });
    const selector = (component: string) => ({ "app.kubernetes.io/name": name, "app.kubernetes.io/component": component });

    manifests.push({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: metadata("api", name),
      spec: {
        replicas: params.replicas?.api ?? 1,
        selector: { matchLabels: selector("api") },
        template: {
          metadata: { labels: selector("api") },
          spec: {
            terminationGracePeriodSeconds: WORKER_GRACE_SECONDS,
            containers: [
              {
                name: "api",
                image,
                command: ["jfast", "start"],
                env: [
                  { name: "JFAST_ENV", value: "production" },
                  { name: "PORT", value: String(port) },
                ],
                envFrom,
                ports: [{ name: "http", containerPort: port }],
                readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 5, failureThreshold: 3 },
              },
            ],
          },
        },
      },
    });
    manifests.push({
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata("api", name),
      spec: { selector: selector("api"), ports: [{ name: "http", port, targetPort: "http" }] },
    });
    if (hasQueue(service)) {
      manifests.push({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: metadata("worker", workerName(service)),
        spec: {
          replicas: params.replicas?.worker ?? 1,
          selector: { matchLabels: selector("worker") },
          template: {
            metadata: { labels: selector("worker") },
            spec: {
              // SIGTERM → the worker stops claiming, running jobs get the grace period, unfinished ones go back.
              terminationGracePeriodSeconds: WORKER_GRACE_SECONDS,
              containers: [
                {
                  name: "worker",
                  image,
                  command: ["jfast", "worker"],
                  env: [{ name: "JFAST_ENV", value: "production" }],
                  envFrom,
                },
              ],
            },
          },
        },
      });
    }
  }
  return { document: manifests, warnings };
}

/** The URLs a service reads from its environment (each section's resolver, e.g. backends/redis/config.ts), for the Secret it needs. */
function secretKeys(service: DeployService): string[] {
  const { config } = service;
  const keys: string[] = [];
  if (config.database) keys.push("DATABASE_URL");
  if (config.queue?.backend === "redis") keys.push("REDIS_URL");
  if (config.queue?.backend === "rabbitmq") keys.push("AMQP_URL");
  if (config.kafka) keys.push("KAFKA_BROKERS");
  return keys;
}
