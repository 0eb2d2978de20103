import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { CliError } from "./errors.js";

/** Serves a Node request listener on node:http. Resolves once listening; listen errors become explained errors. */
export async function listen(params: {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  port: number;
  hostname?: string;
}): Promise<{ server: Server; port: number; address: string; everyInterface: boolean; close(timeoutMs: number): Promise<void> }> {
  const server = createServer(params.listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          new CliError(`port ${params.port} is already in use${params.hostname ? ` on ${params.hostname}` : ""}`, {
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
      } else if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") {
        reject(
          new CliError(`cannot listen on ${params.hostname}: it is not an address of this machine`, {
            code: "HOST_UNAVAILABLE",
            hint: "use an address this machine has (127.0.0.1, or 0.0.0.0 for every interface) with --host or HOST",
            docs: "jfast docs cli#jfast-dev",
            cause: error,
          }),
        );
      } else reject(error);
    });
    server.listen(params.port, params.hostname, () => resolve());
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : params.port;
  const address = typeof bound === "object" && bound ? bound.address : (params.hostname ?? "::");
  return {
    server,
    port,
    address,
    everyInterface: address === "::" || address === "0.0.0.0",
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
