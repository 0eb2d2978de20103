import { ErrorCode } from "./codes.js";

/**
 * Every error jfast raises on purpose. `code` is stable and what tests and callers branch on (one of
 * `ErrorCode`, errors/codes.ts); `hint` names the fix; `docs` names the page that explains it.
 */
export interface JfastErrorOptions {
  code: ErrorCode;
  hint?: string;
  docs?: string;
  cause?: unknown;
}

export class JfastError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly docs: string | undefined;

  constructor(message: string, options: JfastErrorOptions) {
    super(formatMessage(message, options), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "JfastError";
    this.code = options.code;
    this.hint = options.hint;
    this.docs = options.docs;
  }
}

function formatMessage(message: string, { hint, docs }: JfastErrorOptions): string {
  let text = message;
  if (hint) text += `\n  fix: ${hint}`;
  if (docs) text += `\n  see: ${docs}`;
  return text;
}

/** jfast.toml is wrong, or a plugin the configuration needs is not enabled. Start-up stops. */
export class ConfigError extends JfastError {
  constructor(message: string, options: Omit<JfastErrorOptions, "code"> & { code?: ErrorCode }) {
    super(message, { code: options.code ?? ErrorCode.CONFIG_INVALID, docs: options.docs ?? "jfast docs configuration", ...omitCode(options) });
    this.name = "ConfigError";
  }
}

/** A backend was asked for something it cannot do. Never silently skipped. */
export class NotSupportedError extends JfastError {
  constructor(message: string, options: Omit<JfastErrorOptions, "code"> = {}) {
    super(message, { code: ErrorCode.NOT_SUPPORTED, ...options });
    this.name = "NotSupportedError";
  }
}

/** A job ran past its timeout; recorded as the attempt's error and retried like any failure. */
export class JobTimeoutError extends JfastError {
  constructor(message: string) {
    super(message, { code: ErrorCode.JOB_TIMEOUT, docs: "jfast docs worker#timeouts" });
    this.name = "JobTimeoutError";
  }
}

/** A backend could not be reached or answered with an error; the driver error is the cause. */
export class BackendError extends JfastError {
  constructor(message: string, options: Omit<JfastErrorOptions, "code"> & { code?: ErrorCode }) {
    super(message, { code: options.code ?? ErrorCode.BACKEND_UNAVAILABLE, ...omitCode(options) });
    this.name = "BackendError";
  }
}

function omitCode<T extends { code?: ErrorCode }>(options: T): Omit<T, "code"> {
  const { code: _code, ...rest } = options;
  return rest;
}
