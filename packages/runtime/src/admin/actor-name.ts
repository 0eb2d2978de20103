/** The longest name an audit entry records as its actor: a person a dashboard acts for, or `jfast … --as`. */
export const ACTOR_NAME_MAX = 200;

/**
 * Why `name` cannot be an audit entry's actor, or null when it can: it is shown in the dashboard and in logs,
 * so it must be printable (no control characters, not blank) and bounded.
 */
export function actorNameProblem(name: string): string | null {
  if (name.trim().length === 0) return "an actor's name cannot be empty or blank";
  if (name.length > ACTOR_NAME_MAX) return `an actor's name has at most ${ACTOR_NAME_MAX} characters (this one has ${name.length})`;
  if (/\p{Cc}/u.test(name)) return "an actor's name must be printable: no control characters (newlines, tabs, escapes)";
  return null;
}
