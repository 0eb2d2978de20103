/**
 * Every broker object one jfast queue uses, and every header jfast writes. topology.ts declares exactly these
 * names; nothing else in the backend builds a name by hand.
 *
 * For a queue called `jfast.jobs`:
 *   jfast.jobs              the work queue (classic, durable); workers consume it
 *   jfast.jobs.dead         dead letters, newest at the tail
 *   jfast.jobs.delay.<n>    level n of the delay cascade: a topic exchange AND a queue of the same name
 *   jfast.jobs.pruner       an exclusive, empty queue: the pruner's lease (one pruner at a time, held by a connection)
 */
export interface QueueNames {
  readonly queue: string;
  readonly work: string;
  readonly dead: string;
  /** Declared exclusive by the connection whose process prunes the dead queue; no message ever goes to it. */
  readonly pruner: string;
  readonly levels: number;
  /** Level n of the delay cascade; the exchange and the queue share this name. */
  delayLevel(level: number): string;
}

/** AMQP limits queue and exchange names to 255 bytes; the longest name we build is the top delay level. */
const MAX_NAME_BYTES = 255;

export function queueNames(queue: string, levels: number): QueueNames {
  const delayLevel = (level: number): string => {
    if (!Number.isInteger(level) || level < 0 || level >= levels) {
      throw new RangeError(`delay level ${level} is outside the cascade of ${levels} levels`);
    }
    return `${queue}.delay.${level}`;
  };
  const longest = `${queue}.delay.${levels - 1}`;
  if (Buffer.byteLength(longest) > MAX_NAME_BYTES) {
    throw new RangeError(`the queue name "${queue}" is too long: "${longest}" exceeds AMQP's ${MAX_NAME_BYTES} bytes`);
  }
  return {
    queue,
    work: queue,
    dead: `${queue}.dead`,
    pruner: `${queue}.pruner`,
    levels,
    delayLevel,
  };
}

/**
 * Headers jfast writes. The job's JSON body is the source of truth (the worker reads attempts and errors from
 * it); these mirror it so an operator looking at a message in the broker's UI sees the same facts.
 */
export const Header = {
  /** Attempts already spent when the message was published (the JSON's `attempts`). */
  attempts: "x-jfast-attempts",
  task: "x-jfast-task",
  /**
   * Epoch milliseconds a job is due, set only on a delay longer than the whole cascade: a worker that receives
   * such a message before this time sends it round again. The only place jfast compares clocks.
   */
  dueAt: "x-jfast-due-at",
  /**
   * Times the job returned snooze(ms), carried from message to message (a snooze gives its attempt back, so the
   * JSON's attempts cannot count them). Absent: none. The one header the worker reads besides dueAt.
   */
  snoozes: "x-jfast-snoozes",
  /** Epoch milliseconds the job was dead-lettered (dead letters are listed newest first by this). */
  diedAt: "x-jfast-died-at",
  /** `Class: message` of the error that killed a dead letter (cut to 1 024 characters; the body has it whole). */
  lastError: "x-jfast-error",
  /** Why the last attempt ended when the handler did not throw: "worker lost", "unknown task", ... */
  lastReason: "x-jfast-error-reason",
  /** The newest 20 recorded attempts as `attempt n: Class: message` (each cut to 200 characters), oldest first. */
  errors: "x-jfast-errors",
} as const;
