import path from "node:path";
import { loadConfig, type JfastConfig } from "../config/load-config.js";
import type { DeployService } from "./deploy-service.js";
import { InternalPort } from "./ports.js";

/**
 * A service's jfast.toml read for deployment. URLs are not needed to describe containers, so the environment
 * given to the config reader holds the compose network's addresses (a redis or rabbitmq backend without a url
 * would otherwise refuse to load).
 */
export async function loadDeployService(params: { root: string; workspaceRoot: string }): Promise<DeployService> {
  const config: JfastConfig = await loadConfig({
    root: params.root,
    env: {
      JFAST_ENV: "production",
      REDIS_URL: `redis://redis:${InternalPort.redis}`,
      AMQP_URL: `amqp://guest:guest@rabbitmq:${InternalPort.rabbitmq}`,
    },
  });
  const dir = path.relative(params.workspaceRoot, params.root).split(path.sep).join("/") || ".";
  return { config, dir };
}
