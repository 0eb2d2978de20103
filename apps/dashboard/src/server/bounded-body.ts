/** A sign-in form is a name and a password: a few hundred bytes. Anything near this is not one. */
export const LOGIN_BODY_LIMIT = 8 * 1024;

/**
 * Reads a form body of at most `limit` bytes, or answers null without reading further: by the declared
 * Content-Length first, then by counting as it streams (a chunked body declares none). Parsing starts only
 * once the whole body is known to be small.
 */
export async function readSmallForm(request: Request, limit = LOGIN_BODY_LIMIT): Promise<URLSearchParams | FormData | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null && !(Number(declared) <= limit)) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      chunks.push(value);
    }
  }
  const bytes = Buffer.concat(chunks);
  const type = request.headers.get("content-type") ?? "";
  if (type.startsWith("multipart/form-data")) return new Response(bytes, { headers: { "content-type": type } }).formData();
  return new URLSearchParams(bytes.toString("utf8"));
}
