/**
 * A TCP proxy that counts the bytes each way: put between the dashboard and a service, it measures the admin
 * traffic the service answers (every byte the dashboard's server sends and receives on that connection).
 */
import net from "node:net";

export interface ByteProxy {
  port: number;
  /** Bytes received by the service (requests) and sent by it (answers) since start. */
  counts(): { toService: number; fromService: number };
  close(): Promise<void>;
}

export async function startByteProxy(target: { host: string; port: number }, port = 0): Promise<ByteProxy> {
  let toService = 0;
  let fromService = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    sockets.add(client).add(upstream);
    client.on("data", (chunk: Buffer) => (toService += chunk.length));
    upstream.on("data", (chunk: Buffer) => (fromService += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    counts: () => ({ toService, fromService }),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
