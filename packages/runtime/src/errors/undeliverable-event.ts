import { JfastError } from "./jfast-error.js";

/**
 * `outbox.publish` found nobody to deliver the event to: no local subscriber of its type and no bus to
 * other services. Thrown inside the request, before anything is written, so the caller answers with an
 * error instead of committing a fact that would only sit in a table until it dies.
 */
export class UndeliverableEvent extends JfastError {
  readonly eventType: string;
  readonly topic: string;

  constructor(params: { eventType: string; topic: string; service: string }) {
    super(`nobody receives "${params.eventType}" events published to "${params.topic}": service "${params.service}" has no subscriber of that type and no event bus`, {
      code: "UNDELIVERABLE_EVENT",
      hint: `subscribe to it in a module (export const onIt = subscribe("${params.eventType}", async (event) => { ... }) in modules/<name>/tasks.ts), or enable the "kafka" plugin so other services hear it through Kafka`,
      docs: "jfast docs events#undeliverable-events",
    });
    this.name = "UndeliverableEvent";
    this.eventType = params.eventType;
    this.topic = params.topic;
  }
}
