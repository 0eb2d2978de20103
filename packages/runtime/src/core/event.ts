import { randomUUID } from "node:crypto";
import { currentContext } from "./ambient-context.js";
import type { TraceContext } from "./job.js";
import { assertStorable, assertStorableText } from "./storable.js";

/**
 * A fact that happened ("receipt.registered"): past tense, immutable. Local subscribers get one job each
 * through the queue; other services hear it through Kafka. Built inside a request, it carries the request's
 * tenant, request id and trace context, restored for every subscriber and `on` handler.
 */
export interface EventJSON {
  id: string;
  type: string;
  data: unknown;
  /** The aggregate id: Kafka partitions by it, so events of one aggregate stay in order. */
  key: string | null;
  occurredAt: string;
  tenantId: string | null;
  requestId: string | null;
  trace: TraceContext | null;
}

export interface EventInit {
  type: string;
  data?: unknown;
  id?: string;
  key?: string | number | null;
  occurredAt?: Date | string;
  tenantId?: string | null;
  requestId?: string | null;
  trace?: TraceContext | null;
}

const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;

export class Event {
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly key: string | null;
  readonly occurredAt: Date;
  readonly tenantId: string | null;
  readonly requestId: string | null;
  readonly trace: TraceContext | null;

  constructor(init: EventInit) {
    if (typeof init?.type !== "string" || !EVENT_TYPE.test(init.type)) {
      throw new TypeError(
        `new Event({ type }) needs a dotted, lower-case, past-tense type such as "receipt.registered" (got ${JSON.stringify(init?.type)})`,
      );
    }
    const context = currentContext();
    this.id = init.id ?? randomUUID();
    this.type = init.type;
    this.data = init.data ?? {};
    this.key = init.key === undefined || init.key === null ? null : String(init.key);
    this.occurredAt = init.occurredAt ? new Date(init.occurredAt) : new Date();
    this.tenantId = init.tenantId !== undefined ? init.tenantId : (context?.tenantId ?? null);
    this.requestId = init.requestId !== undefined ? init.requestId : (context?.requestId ?? null);
    this.trace =
      init.trace !== undefined
        ? init.trace
        : context?.traceparent
          ? { traceparent: context.traceparent, ...(context.tracestate ? { tracestate: context.tracestate } : {}) }
          : null;
    assertStorableText(this.id, `the id of a "${this.type}" event`);
    assertStorableText(this.key, `the key of a "${this.type}" event`);
    assertStorableText(this.tenantId, `the tenant id of a "${this.type}" event`);
    assertStorableText(this.requestId, `the request id of a "${this.type}" event`);
    assertStorable(this.data, `the data of a "${this.type}" event`);
    Object.freeze(this);
  }

  static fromJSON(json: EventJSON): Event {
    return new Event(json);
  }

  toJSON(): EventJSON {
    return {
      id: this.id,
      type: this.type,
      data: this.data,
      key: this.key,
      occurredAt: this.occurredAt.toISOString(),
      tenantId: this.tenantId,
      requestId: this.requestId,
      trace: this.trace,
    };
  }
}
