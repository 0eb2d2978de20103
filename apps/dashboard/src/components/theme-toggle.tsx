"use client";
import { useEffect, useState } from "react";
import { COOKIE_PATH } from "~/base-path";
import { THEME_COOKIE, THEMES, parseTheme, type Theme } from "./theme";

const LABEL: Record<Theme, string> = { system: "System", light: "Light", dark: "Dark" };

/**
 * System, light or dark. The choice goes into a cookie (so the server renders the right theme on the first
 * paint, without a flash) and onto <html data-theme>, which globals.css reads.
 */
export function ThemeToggle({ initial }: { initial: Theme }) {
  // The server read the same cookie: the pressed button is right in the first HTML.
  const [theme, setTheme] = useState<Theme>(initial);
  useEffect(() => setTheme(parseTheme(document.documentElement.dataset.theme)), []);
  const choose = (next: Theme) => {
    setTheme(next);
    if (next === "system") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = next;
    document.cookie = `${THEME_COOKIE}=${next}; Path=${COOKIE_PATH}; Max-Age=${365 * 86400}; SameSite=Lax`;
  };
  return (
    <div className="theme-toggle">
      <span className="theme-label" id="theme-label">Theme</span>
      <div className="tabs" role="group" aria-labelledby="theme-label">
        {THEMES.map((t) => (
          <button key={t} type="button" aria-pressed={theme === t} onClick={() => choose(t)}>
            {LABEL[t]}
          </button>
        ))}
      </div>
    </div>
  );
}
