import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createJfast, type Jfast } from "../../src/create-jfast.js";
import type { Logger } from "../../src/observability/logger.js";

const VIEWER = "viewer-limits-0123456789abcdef";
const OPERATOR = "operator-limits-0123456789abcdef";

/** A service on the memory queue behind a real node:http server (jfast.routes()), its warnings kept. */
async function startService(admin: string) {
  const root = await mkdtemp(path.join(tmpdir(), "jfast-admin-limits-"));
  await writeFile(
    path.join(root, "jfast.toml"),
    `[service]\nname = "svc"\n[plugins]\nenabled = ["queue"]\n[plugin.queue]\nbackend = "memory"\n[admin]\n${admin}`,
  );
  const warnings: Array<{ message: string; fields: Record<string, unknown> }> = [];
  const logger: Logger = { debug() {}, info() {}, warn: (message, fields = {}) => void warnings.push({ message, fields }), error() {} };
  const jfast: Jfast = await createJfast({ root, env: { JFAST_ADMIN_TOKENS: `viewer:${VIEWER},alice:operator:${OPERATOR}` }, logger });
  await jfast.start();
  const routes = jfast.routes();
  const server = http.createServer((req, res) => void routes(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jfast/admin`;
  return {
    jfast,
    base,
    warnings,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await jfast.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A body of `total` bytes made on demand, counting what the reader pulled. */
function countingBody(total: number, chunk = 64 * 1024) {
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      const size = Math.min(chunk, total - counter.pulled);
      counter.pulled += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
  return { stream, counter };
}

/** POSTs up to `total` bytes in chunks with no content-length, stopping once an answer arrives. */
function sendChunked(url: string, headers: Record<string, string>, total: number): Promise<{ status: number; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const request = http.request(url, { method: "POST", headers }, (response) => {
      answered = true;
      response.resume();
      resolve({ status: response.statusCode ?? 0, sentBytes });
    });
    request.on("error", (error) => (answered ? undefined : reject(error)));
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const write = () => {
      while (!answered && sentBytes < total) {
        sentBytes += chunk.length;
        if (!request.write(chunk)) return void request.once("drain", write);
      }
      if (!answered) request.end();
    };
    write();
  });
}

describe("admin API limits and refusals", () => {
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  afterEach(async () => {
    await service?.close();
    service = null;
  });

  it("stops reading a body at the limit and answers 413 with a clear error", async () => {
    service = await startService("");
    const retry = `${service.base}/deadLetters.retry`;
    const headers = { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" };

    // 200 MB offered as a stream with no length: the handler reads a little past 1 MiB and stops.
    const { stream, counter } = countingBody(200 * 1024 * 1024);
    const streamed = await service.jfast.fetch(new Request(retry, { method: "POST", headers, body: stream, duplex: "half" } as RequestInit));
    expect(streamed.status).toBe(413);
    const answer = (await streamed.json()) as { error: { message: string; data: { code: string; httpStatus: number } } };
    expect(answer.error.data).toMatchObject({ code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });
    expect(answer.error.message).toContain("1048576 bytes");
    expect(answer.error.message).toContain("[admin] max_body_bytes");
    expect(counter.pulled).toBeLessThan(1024 * 1024 + 4 * 64 * 1024);

    // Over HTTP: a declared length past the limit is refused before the body is read.
    const big = await fetch(retry, { method: "POST", headers, body: JSON.stringify({ ids: ["x".repeat(2 * 1024 * 1024)] }) });
    expect(big.status).toBe(413);
    expect(service.warnings.some((w) => w.message.includes("body too large") && w.fields.path === "/jfast/admin/deadLetters.retry")).toBe(true);

    // Over HTTP without a length (chunked): the answer comes while the client is still sending, and the
    // connection closes instead of taking the other 199 MB.
    const chunked = await sendChunked(retry, headers, 200 * 1024 * 1024);
    expect(chunked.status).toBe(413);
    expect(chunked.sentBytes).toBeLessThan(64 * 1024 * 1024);

    // Under the limit everything works as before.
    const small = await fetch(retry, { method: "POST", headers, body: JSON.stringify({ ids: ["no-such-job"] }) });
    expect(small.status).toBe(200);
  });

  it("takes its limit from [admin] max_body_bytes", async () => {
    service = await startService("max_body_bytes = 2048\n");
    const headers = { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" };
    const over = await fetch(`${service.base}/deadLetters.retry`, { method: "POST", headers, body: JSON.stringify({ ids: ["y".repeat(3000)] }) });
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain("2048 bytes");
    const under = await fetch(`${service.base}/deadLetters.retry`, { method: "POST", headers, body: JSON.stringify({ ids: Array.from({ length: 20 }, (_, i) => `job-${i}-${"z".repeat(40)}`) }) });
    expect(under.status).toBe(200);
  });

  it("logs 401 and 403 refusals with the token's name or fingerprint, never the token", async () => {
    service = await startService("");
    const wrong = "wrong-token-0123456789abcdef0123";
    expect((await fetch(`${service.base}/overview.get`, { headers: { authorization: `Bearer ${wrong}` } })).status).toBe(401);
    expect((await fetch(`${service.base}/overview.get`)).status).toBe(401);
    const forbidden = await fetch(`${service.base}/deadLetters.retry`, {
      method: "POST",
      headers: { authorization: `Bearer ${VIEWER}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: ["a"] }),
    });
    expect(forbidden.status).toBe(403);

    const refused = service.warnings.filter((w) => w.message.startsWith("admin call refused"));
    expect(refused.map((w) => [w.message, w.fields.path, w.fields.token])).toEqual([
      ["admin call refused: 401", "overview.get", expect.stringMatching(/^unknown \(fingerprint [0-9a-f]{8}\)$/)],
      ["admin call refused: 401", "overview.get", "none"],
      ["admin call refused: 403", "deadLetters.retry", expect.stringMatching(/^viewer-[0-9a-f]{8}$/)],
    ]);
    expect(refused[2]!.fields.role).toBe("viewer");
    const logged = JSON.stringify(service.warnings);
    for (const token of [wrong, VIEWER, OPERATOR]) expect(logged).not.toContain(token);
  });
});
