import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../../src/config/load-config.js";

/** A webhook receiver on loopback: answers each post with the next status of `statuses` (then 200), keeps the bodies. */
export async function receiver(statuses: number[] = []): Promise<{ url: string; bodies: Array<Record<string, unknown>>; posts: () => number; close(): Promise<void> }> {
  const bodies: Array<Record<string, unknown>> = [];
  let posts = 0;
  const server: Server = createServer((request: IncomingMessage, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    request.on("end", () => {
      posts++;
      const status = statuses.shift() ?? 200;
      if (status === 200) bodies.push(JSON.parse(text) as Record<string, unknown>);
      response.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "receiver is down");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks/jfast`, bodies, posts: () => posts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export type Receiver = Awaited<ReturnType<typeof receiver>>;

/** A service named billing whose jfast.toml is `toml`, loaded: its config, or the error loading it threw. */
export async function loadBillingToml(toml: string, env: NodeJS.ProcessEnv = {}): Promise<unknown> {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-alerts-load-"));
  try {
    await writeFile(path.join(root, "jfast.toml"), `[service]\nname = "billing"\n\n${toml}`);
    return await loadConfig({ root, env });
  } catch (error) {
    return error;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
