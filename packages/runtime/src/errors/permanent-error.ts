/**
 * Thrown by a handler: this job can never succeed, so it is dead-lettered at once, without a retry, with this
 * error (its class and message) recorded like any other attempt's. Subclass it to keep a more precise class.
 */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
