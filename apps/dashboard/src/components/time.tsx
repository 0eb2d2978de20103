"use client";

/** "3 min ago", with the exact UTC time on hover. */
export function RelativeTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.round(abs / 60)} min` : abs < 86400 ? `${Math.round(abs / 3600)} h` : `${Math.round(abs / 86400)} d`;
  return (
    <time dateTime={iso} title={iso}>
      {seconds >= 0 ? `${text} ago` : `in ${text}`}
    </time>
  );
}
