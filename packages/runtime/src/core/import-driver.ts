import { JfastError } from "../errors/jfast-error.js";

/**
 * The optional peer dependencies: a service installs only the drivers of what its jfast.toml configures, so
 * each one is imported where it is first needed, through `importDriver`, and a missing one stops start-up
 * naming the package and the command that installs it.
 */
const OTEL_INSTALL = "npm install @opentelemetry/sdk-trace-base @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http";

const DRIVERS = {
  pg: { usedBy: "a PostgreSQL database ([plugin.database] url or DATABASE_URL)", install: "npm install pg" },
  "@electric-sql/pglite": {
    usedBy: "the embedded database ([plugin.database] without a url)",
    install: "npm install @electric-sql/pglite",
  },
  ioredis: { usedBy: "Redis ([plugin.queue] backend = \"redis\")", install: "npm install ioredis" },
  amqplib: { usedBy: "RabbitMQ ([plugin.queue] backend = \"rabbitmq\")", install: "npm install amqplib" },
  kafkajs: { usedBy: "Kafka (the \"kafka\" plugin)", install: "npm install kafkajs" },
  "@opentelemetry/sdk-trace-base": { usedBy: "tracing (the telemetry plugin)", install: OTEL_INSTALL },
  "@opentelemetry/resources": { usedBy: "tracing (the telemetry plugin)", install: OTEL_INSTALL },
  "@opentelemetry/exporter-trace-otlp-http": { usedBy: "tracing (the telemetry plugin)", install: OTEL_INSTALL },
  typescript: { usedBy: "the contracts commands, which read the modules' source", install: "npm install --save-dev typescript" },
} as const;

export type DriverName = keyof typeof DRIVERS;

/**
 * Runs `load` (an `import()` of the driver, or of a module that imports it) and turns "Cannot find package
 * '<name>'" into a DRIVER_MISSING error. Any other failure is rethrown as it is.
 */
export async function importDriver<T>(name: DriverName, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, name)) {
      const driver = DRIVERS[name];
      throw new JfastError(`the package "${name}" is not installed; jfast needs it for ${driver.usedBy}`, {
        code: "DRIVER_MISSING",
        hint: driver.install,
        docs: "jfast docs getting-started#drivers",
        cause: error,
      });
    }
    throw error;
  }
}

function isMissingPackage(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  const message = String((error as Error).message);
  return message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`'${name}/`);
}
