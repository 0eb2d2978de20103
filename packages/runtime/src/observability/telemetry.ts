import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { Event } from "../core/event.js";
import { importDriver } from "../core/import-driver.js";
import type { Job, TraceContext } from "../core/job.js";
import type { Cancellation, TaskDefinition } from "../core/task.js";
import { currentContext, withTrace } from "../context/context.js";
import { TRACEPARENT } from "./trace-id.js";

/** Options a program (tests, a host with its own SDK set-up) passes to createJfast; not read from jfast.toml. */
/**
 * An OpenTelemetry SpanExporter (`@opentelemetry/sdk-trace-base`), described by its shape so the published
 * types do not need the SDK, an optional peer dependency, to be installed.
 */
export interface SpanExporterLike {
  export(spans: never[], resultCallback: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
  forceFlush?(): Promise<void>;
}

export interface TelemetryOptions {
  /** Spans are also given to this exporter, one at a time as they end (an InMemorySpanExporter in tests). */
  spanExporter?: SpanExporterLike;
}

export type Execute = (definition: TaskDefinition, job: Job, cancellation: Cancellation) => Promise<unknown>;

/** What telemetry needs of a queue to trace its enqueues (the queue provider is one). */
export interface TraceableQueue {
  readonly name: string;
  prepare(job: Job): Job;
  enqueue(job: Job | Job[]): Promise<unknown>;
}

/** What telemetry needs of an outbox to trace what it writes (the outbox provider is one). */
export interface TraceableOutbox {
  enqueue(session: unknown, job: Job | Job[]): Promise<unknown>;
  publish(session: unknown, topic: string, event: Event): Promise<unknown>;
}

/** What telemetry needs of an event bus to trace what it produces (the Kafka bus is one). */
export interface TraceableBus {
  readonly brokers: readonly string[];
  readonly topicPrefix: string;
  publish(topic: string, events: Event | readonly Event[]): Promise<void>;
}

/** Where a consumed message came from, as a traced `on(...)` handler is told. */
export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
}

/** What telemetry needs of an `on(...)` handler's declaration to trace its calls. */
export interface TraceableHandler<T extends ConsumedMessage = ConsumedMessage> {
  readonly handler: (event: Event, tools: T) => unknown;
}

/**
 * The telemetry plugin's tracer and its decorators. Each decorator returns the provider it is given, traced,
 * and leaves that one as it was: the plugin that provides a provider applies it once, before providing it.
 */
export interface Telemetry {
  readonly tracer: Tracer;
  /** The queue with `publish <queue>` spans around enqueue; each job then carries its span as its trace parent. */
  traceQueue<Q extends TraceableQueue>(queue: Q): Q;
  /** The outbox with `publish <queue>` spans around enqueue and `publish <topic>` around publish. */
  traceOutbox<O extends TraceableOutbox>(outbox: O, queueName: string | null): O;
  /** `process <task>` around each attempt, child of the job's publish span; jobs enqueued inside inherit it. */
  wrapExecute(execute: Execute, queueName: string): Execute;
  /**
   * The events provider services use: `publish <topic>` (kafka, producer) around each event of
   * `events.publish(topic, events)`, whose traceparent the message carries (value and header). The relay
   * keeps the plain bus: an outbox event already has its `publish` span from `outbox.publish`.
   */
  traceEvents<B extends TraceableBus>(bus: B): B;
  /** `process <topic>` around each `on` handler call, child of the message's traceparent (its publish span). */
  wrapEventHandler<T extends ConsumedMessage, D extends TraceableHandler<T>>(definition: D & TraceableHandler<T>, consumer?: { consumerGroup: string }): D;
  /** Exports what has ended (on jfast.stop()); the provider stays usable for a later start(). */
  flush(): Promise<void>;
}


/** The W3C traceparent as a remote parent; ROOT_CONTEXT (a new trace) when absent or malformed. */
export function parentContext(traceContext: { traceparent?: string | null | undefined } | null | undefined): Context {
  const match = traceContext?.traceparent ? TRACEPARENT.exec(traceContext.traceparent) : null;
  if (!match || match[2] === "0".repeat(32) || match[3] === "0".repeat(16)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: match[2]!, spanId: match[3]!, traceFlags: parseInt(match[4]!, 16), isRemote: true });
}

export function traceparentOf(span: Span): string {
  const context = span.spanContext();
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags.toString(16).padStart(2, "0")}`;
}

function currentTrace(): TraceContext | null {
  const context = currentContext();
  return context?.traceparent ? { traceparent: context.traceparent, ...(context.tracestate ? { tracestate: context.tracestate } : {}) } : null;
}

/**
 * The telemetry plugin. One tracer provider per jfast instance (nothing registered globally, so a host's own
 * OpenTelemetry set-up is left alone). Spans go to OTLP/HTTP when `[plugin.telemetry] endpoint` is set and to
 * `options.spanExporter` when given; with neither, no tracer is built and trace context still travels as-is.
 * The causal chain rides on jfast's own async context (the `traceparent` a request or a job carries), so it
 * needs no global context manager.
 */
export async function createTelemetry(params: {
  serviceName: string;
  endpoint: string | undefined;
  options: TelemetryOptions | undefined;
}): Promise<Telemetry | null> {
  if (!params.endpoint && !params.options?.spanExporter) return null;
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } = await importDriver("@opentelemetry/sdk-trace-base", () => import("@opentelemetry/sdk-trace-base"));
  const { resourceFromAttributes } = await importDriver("@opentelemetry/resources", () => import("@opentelemetry/resources"));
  const spanProcessors = [];
  if (params.endpoint) {
    const { OTLPTraceExporter } = await importDriver("@opentelemetry/exporter-trace-otlp-http", () => import("@opentelemetry/exporter-trace-otlp-http"));
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: params.endpoint })));
  }
  if (params.options?.spanExporter) spanProcessors.push(new SimpleSpanProcessor(params.options.spanExporter as SpanExporter));
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": params.serviceName }), spanProcessors });
  const tracer = provider.getTracer("jfast");

  function publishJobs(queueName: string, jobs: Job[]): Span[] {
    return jobs.map((job) => {
      const span = tracer.startSpan(
        `publish ${queueName}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            "messaging.system": "jfast",
            "messaging.operation": "publish",
            "messaging.operation.name": "publish",
            "messaging.operation.type": "send",
            "messaging.destination.name": queueName,
            "messaging.message.id": job.id,
            "jfast.task": job.task,
          },
        },
        parentContext(job.trace ?? currentTrace()),
      );
      // The job carries its publish span: the worker's process span becomes its child.
      (job as { trace: TraceContext | null }).trace = { traceparent: traceparentOf(span), ...(job.trace?.tracestate ? { tracestate: job.trace.tracestate } : {}) };
      return span;
    });
  }

  async function ending<T>(spans: Span[], work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      for (const span of spans) fail(span, error);
      throw error;
    } finally {
      for (const span of spans) span.end();
    }
  }

  return {
    tracer,
    traceQueue(queue) {
      const enqueue = queue.enqueue.bind(queue);
      const traced: TraceableQueue["enqueue"] = (job) => {
        const jobs = (Array.isArray(job) ? job : [job]).map(queue.prepare);
        return ending(publishJobs(queue.name, jobs), () => enqueue(jobs));
      };
      return replacing(queue, { enqueue: traced });
    },
    traceOutbox(outbox, queueName) {
      const enqueue = outbox.enqueue.bind(outbox);
      const publish = outbox.publish.bind(outbox);
      const tracedEnqueue: TraceableOutbox["enqueue"] = (session, job) => {
        const jobs = Array.isArray(job) ? job : [job];
        return ending(publishJobs(queueName ?? "jfast.jobs", jobs), () => enqueue(session, jobs));
      };
      const tracedPublish: TraceableOutbox["publish"] = (session, topic, event) => {
        const span = tracer.startSpan(
          `publish ${topic}`,
          {
            kind: SpanKind.PRODUCER,
            attributes: {
              "messaging.system": "jfast",
              "messaging.operation": "publish",
              "messaging.operation.name": "publish",
              "messaging.operation.type": "send",
              "messaging.destination.name": topic,
              "messaging.message.id": event.id,
              "jfast.event.type": event.type,
            },
          },
          parentContext(event.trace ?? currentTrace()),
        );
        const traceparent = traceparentOf(span);
        // Subscriber jobs and the Kafka message (its traceparent header) descend from this span. Events are
        // frozen: the one published is a copy carrying the span, same id and data.
        const traced = Event.fromJSON({ ...event.toJSON(), trace: { traceparent, ...(event.trace?.tracestate ? { tracestate: event.trace.tracestate } : {}) } });
        return ending([span], () => withTrace({ traceparent }, () => publish(session, topic, traced)));
      };
      return replacing(outbox, { enqueue: tracedEnqueue, publish: tracedPublish });
    },
    wrapExecute(execute, queueName) {
      return (definition, job, cancellation) => {
        const span = tracer.startSpan(
          `process ${job.task}`,
          {
            kind: SpanKind.CONSUMER,
            attributes: {
              "messaging.system": "jfast",
              "messaging.operation": "process",
              "messaging.operation.name": "process",
              "messaging.operation.type": "process",
              "messaging.destination.name": queueName,
              "messaging.message.id": job.id,
              "jfast.task": job.task,
              "jfast.attempt": job.attempts,
            },
          },
          parentContext(job.trace),
        );
        return ending([span], () => withTrace({ traceparent: traceparentOf(span), tracestate: job.trace?.tracestate }, () => execute(definition, job, cancellation)));
      };
    },
    traceEvents(bus) {
      const publish = bus.publish.bind(bus);
      const prefix = bus.topicPrefix;
      const [host, port] = (bus.brokers[0] ?? "").split(":");
      const tracedPublish: TraceableBus["publish"] = (topic, events) => {
        const list = (Array.isArray(events) ? events : [events]) as readonly unknown[];
        const spans: Span[] = [];
        const traced = list.map((item) => {
          // Anything but an event goes through untouched: the bus rejects it with its own error.
          const json = typeof (item as Event | null)?.toJSON === "function" ? (item as Event).toJSON() : null;
          if (!json || typeof json.id !== "string" || typeof json.type !== "string") return item;
          const span = tracer.startSpan(
            `publish ${topic}`,
            {
              kind: SpanKind.PRODUCER,
              attributes: {
                "messaging.system": "kafka",
                "messaging.operation": "publish",
                "messaging.operation.name": "publish",
                "messaging.operation.type": "send",
                "messaging.destination.name": prefix + topic,
                "messaging.message.id": json.id,
                ...(json.key ? { "messaging.kafka.message.key": json.key } : {}),
                ...(list.length > 1 ? { "messaging.batch.message_count": list.length } : {}),
                ...(host ? { "server.address": host } : {}),
                ...(port ? { "server.port": Number(port) } : {}),
                "jfast.event.type": json.type,
              },
            },
            parentContext(json.trace ?? currentTrace()),
          );
          spans.push(span);
          // The message (its value and its traceparent header) carries this span: the consumer's process
          // span becomes its child. Events are frozen: a copy with the same id and data.
          return Event.fromJSON({ ...json, trace: { traceparent: traceparentOf(span), ...(json.trace?.tracestate ? { tracestate: json.trace.tracestate } : {}) } });
        });
        return ending(spans, () => publish(topic, (Array.isArray(events) ? traced : traced[0]) as Event | readonly Event[]));
      };
      return replacing(bus, { publish: tracedPublish });
    },
    wrapEventHandler(definition, consumer) {
      const handler = definition.handler;
      return {
        ...definition,
        handler: (event: Event, tools: Parameters<typeof handler>[1]) => {
          // The consumer runs each handler with the event's tenant, request and trace restored.
          const span = tracer.startSpan(
            `process ${tools.topic}`,
            {
              kind: SpanKind.CONSUMER,
              attributes: {
                "messaging.system": "kafka",
                "messaging.operation": "process",
                "messaging.operation.name": "process",
                "messaging.operation.type": "process",
                "messaging.destination.name": tools.topic,
                "messaging.message.id": event.id,
                "messaging.destination.partition.id": String(tools.partition),
                "messaging.kafka.offset": Number(tools.offset),
                ...(event.key !== null ? { "messaging.kafka.message.key": event.key } : {}),
                ...(consumer ? { "messaging.consumer.group.name": consumer.consumerGroup } : {}),
                "jfast.event.type": event.type,
              },
            },
            parentContext(event.trace ?? currentTrace()),
          );
          return ending([span], async () => withTrace({ traceparent: traceparentOf(span), tracestate: event.trace?.tracestate }, () => handler(event, tools)));
        },
      };
    },
    async flush() {
      await provider.forceFlush();
    },
  };
}

/** `target` seen with `methods` in place of its own; every other property read from `target` itself, as it is now. */
function replacing<T extends object>(target: T, methods: Readonly<Record<string, unknown>>): T {
  return new Proxy(target, {
    get: (object, property) => (typeof property === "string" && Object.hasOwn(methods, property) ? methods[property] : Reflect.get(object, property, object)),
  });
}

function fail(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setAttribute("error.type", error instanceof Error ? error.name : typeof error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
