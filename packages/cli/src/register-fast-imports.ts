/**
 * `node --import @jfast/cli/dist/register-fast-imports.js server.js`: a service that embeds the runtime in a process
 * of its own gets what the jfast binary installs first (fast-imports.ts, docs/deploy.md#start-up-on-node-22-and-later).
 */
import { installFastImports } from "./fast-imports.js";

installFastImports();
