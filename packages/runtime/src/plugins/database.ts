import type { DatabaseProvider } from "../database/database-provider.js";
import { ConfigError } from "../errors/jfast-error.js";
import type { Plugin } from "./plugin.js";

/** `[plugin.database]`: the primary database (node-postgres, or embedded PGlite without a url), migrated. */
export function databasePlugin(): Plugin<"database"> {
  let database: DatabaseProvider | null = null;
  return {
    name: "database",
    plugin: "database",
    requires: [],
    after: [],
    provides: ["database"],
    enabled: ({ config }) => config.database !== null,
    check({ config, registry }) {
      const sessionTasks = registry.all().filter((t) => t.options.session);
      if (sessionTasks.length > 0 && !config.database) {
        throw new ConfigError(
          `task "${sessionTasks[0]!.name}" asks for a session (session: true) but the database plugin is not enabled`,
          {
            code: "CONFIG_PLUGIN_MISSING",
            hint: `add "database" to [plugins] enabled in jfast.toml (with no url it runs embedded), or remove session: true`,
            docs: "jfast docs tasks#task-sessions",
          },
        );
      }
    },
    async start({ config, logger, provide }) {
      const { openDatabase } = await import("../database/open-database.js");
      database = await openDatabase({ config: config.database!, root: config.root, logger });
      provide("database", database);
      return database;
    },
    async stop() {
      await database?.close();
      database = null;
    },
  };
}
