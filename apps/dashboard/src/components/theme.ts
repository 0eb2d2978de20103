/** The colour theme: follow the system setting, or a choice stored in this cookie (read by the root layout). */
export const THEME_COOKIE = "jfast_theme";
export const THEMES = ["system", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

export function parseTheme(value: string | undefined): Theme {
  return THEMES.includes(value as Theme) ? (value as Theme) : "system";
}
