import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { CliError } from "./errors.js";
import type { FetchHandler } from "./service.js";

/** Serves a Web fetch handler on node:http. Resolves once listening; listen errors become explained errors. */
export async function listen(params: { fetch: FetchHandler; port: number; hostname?: string }): Promise<{ server: Server; port: number; close(timeoutMs: number): Promise<void> }> {
  const server = createServer(getRequestListener((request) => params.fetch(request)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          new CliError(`port ${params.port} is already in use`, {
            code: "PORT_IN_USE",
            hint: `stop the process listening on ${params.port}, or start with PORT=<another port>`,
            docs: "jfast docs configuration#port",
            cause: error,
          }),
        );
      } else if (error.code === "EACCES") {
        reject(
          new CliError(`not allowed to listen on port ${params.port}`, {
            code: "PORT_FORBIDDEN",
            hint: "use a port above 1023: set PORT or [service] base_port",
            docs: "jfast docs configuration#port",
            cause: error,
          }),
        );
      } else reject(error);
    });
    server.listen(params.port, params.hostname, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : params.port;
  return {
    server,
    port,
    async close(timeoutMs) {
      // Stop accepting; idle keep-alive sockets would otherwise hold close() open.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      server.closeAllConnections();
    },
  };
}
