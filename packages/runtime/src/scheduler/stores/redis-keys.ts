/**
 * The scheduler's Redis keys, built here and nowhere else. They share the queue's hash tag `{<queue>}`, so
 * both live in one Cluster slot (each script touches both) and sit beside the queue they feed.
 *
 *   <p>{q}:schedule:last     HASH  schedule name → last claimed tick (epoch ms); never pruned
 *   <p>{q}:schedule:claims   ZSET  "<tick ms>:<name>" → claimed at (epoch ms); history, pruned
 *   <p>{q}:schedule:stored   HASH  schedule name → JSON StoredSchedule (made at run time, or a declared one's pause)
 */
export interface ScheduleKeys {
  readonly last: string;
  readonly claims: string;
  readonly stored: string;
}

export function scheduleKeys(params: { queue: string; prefix?: string }): ScheduleKeys {
  const { queue, prefix = "" } = params;
  if (!queue || /[{}]/.test(queue) || /[{}]/.test(prefix)) {
    // A brace would end the hash tag early and split the keys across slots.
    throw new TypeError(`a Redis queue name and prefix must be non-empty and free of braces, got queue "${queue}" prefix "${prefix}"`);
  }
  const stem = `${prefix}{${queue}}:schedule`;
  return { last: `${stem}:last`, claims: `${stem}:claims`, stored: `${stem}:stored` };
}
