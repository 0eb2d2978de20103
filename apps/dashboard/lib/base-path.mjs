// The dashboard's base path: where it is mounted in the host's URL space ("" at the root, "/ops" under a path).
// The production build is made under a placeholder base path; lib/server.mjs writes the real one into a copy of
// the build when it starts (docs/dashboard.md#under-a-path).

/** The base path the production build is made with, replaced at start-up. Letters only: no regex escapes it. */
export const BUILD_BASE_PATH = "/jfastbasepathplaceholder";

/**
 * "" for the root, otherwise "/a" or "/a/b": segments of letters, digits, "_", "-" and "~", no trailing slash.
 * @param {unknown} value
 * @returns {string | null} the normalised base path, or null when the value cannot be one
 */
export function normaliseBasePath(value) {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") return null;
  const trimmed = value.trim().replace(/\/+$/, "");
  if (trimmed === "") return "";
  return /^(\/[A-Za-z0-9_~-]+)+$/.test(trimmed) && trimmed !== BUILD_BASE_PATH ? trimmed : null;
}
