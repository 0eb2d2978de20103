// Spans from several processes in one shape, an OTLP/HTTP collector for the spans of a child process, and
// the span tree rendered as indented text.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

const KINDS = ["internal", "server", "client", "producer", "consumer"] as const;

export interface FlatSpan {
  /** Which process made it (`api`, `worker`). */
  process: string;
  service: string;
  name: string;
  kind: (typeof KINDS)[number];
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  status: "unset" | "ok" | "error";
}

export function flatten(spans: ReadableSpan[], process: string): FlatSpan[] {
  return spans.map((span) => ({
    process,
    service: String(span.resource.attributes["service.name"]),
    name: span.name,
    kind: KINDS[span.kind]!,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    attributes: { ...span.attributes },
    status: (["unset", "ok", "error"] as const)[span.status.code]!,
  }));
}

/** OTLP/JSON AnyValue → a plain value. */
function anyValue(value: Record<string, unknown>): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("boolValue" in value) return value.boolValue;
  if ("arrayValue" in value) return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(anyValue);
  return null;
}

function attributes(list: Array<{ key: string; value: Record<string, unknown> }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value)]));
}

export interface Collector {
  /** OTLP/HTTP traces endpoint, for `[plugin.telemetry] endpoint`. */
  url: string;
  spans: FlatSpan[];
  /** Requests that were not OTLP/JSON trace exports (wrong path or content type): each one a test failure. */
  rejected: string[];
  close(): Promise<void>;
}

/**
 * A minimal OTLP/HTTP trace receiver on 127.0.0.1 (JSON encoding, what @opentelemetry/exporter-trace-otlp-http
 * sends): every span of every export is flattened into `spans`, tagged with `process`.
 */
export async function startCollector(label: string): Promise<Collector> {
  const spans: FlatSpan[] = [];
  const rejected: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const type = request.headers["content-type"] ?? "";
      if (request.method !== "POST" || request.url !== "/v1/traces" || !type.startsWith("application/json")) {
        rejected.push(`${request.method} ${request.url} ${type}`);
        response.writeHead(400).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (request.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const payload = JSON.parse(body.toString("utf8")) as {
        resourceSpans?: Array<{
          resource?: { attributes?: Array<{ key: string; value: Record<string, unknown> }> };
          scopeSpans?: Array<{ spans?: Array<Record<string, any>> }>;
        }>;
      };
      for (const resourceSpans of payload.resourceSpans ?? []) {
        const service = String(attributes(resourceSpans.resource?.attributes)["service.name"]);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              process: label,
              service,
              name: span.name,
              // OTLP numbers kinds from 1 (0 is "unspecified").
              kind: KINDS[Number(span.kind) - 1]!,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || null,
              attributes: attributes(span.attributes),
              status: (["unset", "ok", "error"] as const)[Number(span.status?.code ?? 0)]!,
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The span tree as indented text, children under their parent, each line tagged with its process:
 * `[worker]     process mail.send_receipt (consumer)  span=… parent=…`. Spans whose parent is not among
 * them are roots (their parent is printed, e.g. the request's span).
 */
export function renderTree(spans: FlatSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, FlatSpan[]>();
  for (const span of spans) {
    if (span.parentSpanId && ids.has(span.parentSpanId)) children.set(span.parentSpanId, [...(children.get(span.parentSpanId) ?? []), span]);
  }
  const tag = Math.max(...spans.map((s) => s.process.length)) + 2;
  const rows: Array<[string, string]> = [];
  const walk = (span: FlatSpan, depth: number) => {
    const a = span.attributes;
    const details = [
      `${a["messaging.system"]}`,
      `dest=${a["messaging.destination.name"]}`,
      ...(a["jfast.task"] !== undefined ? [`task=${a["jfast.task"]}`] : []),
      ...(a["jfast.attempt"] !== undefined ? [`attempt=${a["jfast.attempt"]}`] : []),
      ...(span.status === "error" ? [`ERROR ${a["error.type"]}`] : []),
      `span=${span.spanId}`,
      `parent=${span.parentSpanId ?? "-"}`,
    ];
    rows.push([`${`[${span.process}]`.padEnd(tag)} ${"  ".repeat(depth)}${span.name} (${span.kind})`, details.join(" ")]);
    for (const child of children.get(span.spanId) ?? []) walk(child, depth + 1);
  };
  const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
  const traces = [...new Set(roots.map((s) => s.traceId))];
  const lines: string[] = [];
  for (const traceId of traces) {
    lines.push(`trace ${traceId}`);
    const start = rows.length;
    for (const root of roots.filter((s) => s.traceId === traceId)) walk(root, 0);
    const width = Math.max(...rows.slice(start).map(([left]) => left.length));
    lines.push(...rows.slice(start).map(([left, right]) => `${left.padEnd(width)}  ${right}`));
  }
  return lines.join("\n");
}
