/**
 * Admin calls carry ids and filters, never files. A body is read as it streams in and the read stops at the
 * limit, so a client cannot make the service buffer hundreds of megabytes before it is refused.
 */
export async function readBodyWithin(request: Request, limitBytes: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(request.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limitBytes) {
    await request.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/**
 * 413 in tRPC's error shape, so the dashboard's client shows the message like any other refusal. The
 * connection closes after it: the unread rest of the body is not worth receiving.
 */
export function bodyTooLarge(limitBytes: number): Response {
  const message = `the request body is larger than the admin API accepts (${limitBytes} bytes); raise [admin] max_body_bytes if a call really needs more`;
  const body = { error: { message, code: -32013, data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413 } } };
  return new Response(JSON.stringify(body), { status: 413, headers: { "content-type": "application/json", "cache-control": "no-store", connection: "close" } });
}
