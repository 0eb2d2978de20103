import type { Metadata } from "next";
import { cookies } from "next/headers";
import type { ReactNode } from "react";
import { HydrationMark } from "~/components/hydration-mark";
import { THEME_COOKIE, parseTheme } from "~/components/theme";
import "./globals.css";

export const metadata: Metadata = { title: "jfast dashboard", description: "Queues, dead letters, schedules and contracts across services" };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <html lang="en" data-theme={theme === "system" ? undefined : theme}>
      <body>
        {children}
        <HydrationMark />
      </body>
    </html>
  );
}
