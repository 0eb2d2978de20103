"use client";

/**
 * "3 min ago", with the exact UTC time on hover. Rendered first on the server (pages carry their data in their
 * HTML), a second later in the browser: the text may differ by that second, which is not worth a warning; the
 * next render brings it up to date.
 */
export function RelativeTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.round(abs / 60)} min` : abs < 86400 ? `${Math.round(abs / 3600)} h` : `${Math.round(abs / 86400)} d`;
  return (
    <time dateTime={iso} title={iso} suppressHydrationWarning>
      {seconds >= 0 ? `${text} ago` : `in ${text}`}
    </time>
  );
}
