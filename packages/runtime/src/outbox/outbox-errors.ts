import { JfastError } from "../errors/jfast-error.js";

const DOCS = "jfast docs outbox";

/**
 * A row that no retry can deliver with this process's configuration: an event with no bus, a job for a
 * queue this service does not have, a body that is not a job or an event. It dies on its first attempt.
 */
export class OutboxUndeliverable extends JfastError {
  constructor(message: string, hint: string) {
    super(message, { code: "OUTBOX_UNDELIVERABLE", hint, docs: `${DOCS}#dead-rows` });
    this.name = "OutboxUndeliverable";
  }
}

/** A send that did not settle within `[plugin.outbox] send_timeout`; counted as a failed attempt. */
export class OutboxSendTimeout extends JfastError {
  constructor(timeoutMs: number, destination: string) {
    super(`the send to ${destination} did not settle within ${timeoutMs / 1000} s`, {
      code: "OUTBOX_SEND_TIMEOUT",
      hint: "check that the queue or broker is reachable; raise [plugin.outbox] send_timeout if it is only slow",
      docs: `${DOCS}#retries`,
    });
    this.name = "OutboxSendTimeout";
  }
}

/** The row's previous claim was never settled and it was the row's last attempt. */
export const RELAY_LOST = "relay lost";
