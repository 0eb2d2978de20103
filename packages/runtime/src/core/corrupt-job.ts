/**
 * What a stored job or a message that cannot be read becomes on every backend: a dead letter of this task,
 * with an error of this class and reason that says what is wrong. The registry refuses the name, so a retried
 * one dies again at once as an unknown task instead of reaching a handler.
 */
export const CorruptJob = {
  task: "jfast.corrupt_job",
  errorClass: "CorruptJob",
  reason: "corrupt job",
} as const;
