import { JfastError } from "../errors/jfast-error.js";
import type { Job } from "../core/job.js";
import {
  LOG_BYTES_PER_ATTEMPT,
  PROGRESS_WRITE_MS,
  progressProblem,
  type AttemptRun,
  type JobLog,
  type JobLogLevel,
  type JobLogLine,
  type JobProgress,
} from "../core/job-life.js";
import type { QueueBackend } from "../core/queue-backend.js";
import type { Logger } from "../observability/logger.js";

/** What a worker gives the attempts that use `tools.progress` or `tools.log` (one object per worker). */
export interface LifeSink {
  readonly workerId: string;
  readonly backend: QueueBackend;
  readonly logger: Logger;
  /** `[plugin.queue] job_log_lines`. */
  readonly maxLogLines: number;
}

/**
 * One attempt's progress and log lines, made when its handler first calls `tools.progress` or `tools.log` (an
 * attempt that calls neither makes none). Progress is written at most once per PROGRESS_WRITE_MS while the job
 * runs (a write of its own, on the backend's `setProgress`); the last value and the kept lines go with the
 * attempt's outcome write.
 */
export class AttemptLife {
  private progressValue: JobProgress | undefined;
  private lastWriteAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing = false;
  private ended = false;
  private lines: JobLogLine[] | undefined;
  private bytes = 0;
  private dropped = 0;
  private logApi: JobLog | undefined;

  constructor(
    private readonly sink: LifeSink,
    private readonly job: Job,
  ) {}

  progress(value: JobProgress): void {
    const problem = progressProblem(value);
    if (problem) {
      throw new JfastError(`tools.progress: ${problem}`, {
        code: "PROGRESS_INVALID",
        hint: "pass a percentage from 0 to 100, or a small JSON object such as { done: 10, total: 40 }",
        docs: "jfast docs jobs#progress",
      });
    }
    this.progressValue = typeof value === "number" ? value : (JSON.parse(JSON.stringify(value)) as JobProgress);
    if (this.ended) return;
    this.schedule();
  }

  get log(): JobLog {
    return (this.logApi ??= {
      info: (message, fields) => this.line("info", message, fields),
      warn: (message, fields) => this.line("warn", message, fields),
      error: (message, fields) => this.line("error", message, fields),
    });
  }

  /** The attempt ended: no more progress writes; its last value and lines go into the attempt's record. */
  end(run: AttemptRun): void {
    this.ended = true;
    clearTimeout(this.timer);
    if (this.progressValue !== undefined) run.progress = this.progressValue;
    if (this.lines && this.lines.length > 0) run.logs = this.lines;
    if (this.dropped > 0) run.logsDropped = this.dropped;
  }

  private line(level: JobLogLevel, message: string, fields?: Record<string, unknown>): void {
    // The handler runs inside the job's context: the service's logger adds tenant, request, job id, task, attempt.
    this.sink.logger[level](message, fields);
    if (this.ended) return;
    const line: JobLogLine = { at: new Date().toISOString(), level, message: String(message) };
    let size: number;
    try {
      if (fields !== undefined) line.fields = JSON.parse(JSON.stringify(fields)) as Record<string, unknown>;
      size = JSON.stringify(line).length;
    } catch {
      line.fields = { unreadable: "these fields are not JSON" };
      size = JSON.stringify(line).length;
    }
    const lines = (this.lines ??= []);
    if (lines.length >= this.sink.maxLogLines || this.bytes + size > LOG_BYTES_PER_ATTEMPT) {
      this.dropped += 1;
      return;
    }
    this.bytes += size;
    lines.push(line);
  }

  /** Writes now when the last write is a second old and none is in flight, else once the second is up. */
  private schedule(): void {
    if (this.timer !== undefined || this.writing) return;
    const wait = this.lastWriteAt + PROGRESS_WRITE_MS - Date.now();
    if (wait <= 0) {
      this.write();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, wait);
    this.timer.unref();
  }

  private write(): void {
    if (this.ended || this.progressValue === undefined) return;
    this.writing = true;
    this.lastWriteAt = Date.now();
    const { backend, workerId, logger } = this.sink;
    const written = this.progressValue;
    backend
      .setProgress({ workerId, job: this.job, progress: written })
      .catch((error: unknown) => logger.warn("could not write a job's progress; the next value is written later", { error, job_id: this.job.id }))
      .finally(() => {
        this.writing = false;
        // A value given while this one was written goes in the next second.
        if (!this.ended && this.progressValue !== written) this.schedule();
      });
  }
}
