import { describe, expect, it } from "vitest";
import { crossOriginRefusal } from "./same-origin";

const post = (headers: Record<string, string>) => new Request("http://127.0.0.1:3000/api/login", { method: "POST", headers: { host: "dash.example.com:3000", ...headers } });

describe("same-origin check of a POST", () => {
  it("refuses another site's page, a sandboxed frame and a cross-site fetch", () => {
    expect(crossOriginRefusal(post({ origin: "https://evil.example" }))).toMatch(/refused/);
    expect(crossOriginRefusal(post({ origin: "null" }))).toMatch(/refused/);
    expect(crossOriginRefusal(post({ origin: "null", "sec-fetch-site": "cross-site" }))).toMatch(/refused/);
    expect(crossOriginRefusal(post({ origin: "http://dash.example.com:3001" }))).toMatch(/refused/);
    // The URL Next.js hands over says localhost whatever the request said: it does not make an origin ours.
    expect(crossOriginRefusal(post({ origin: "http://127.0.0.1:3000" }))).toMatch(/refused/);
    expect(crossOriginRefusal(post({ "sec-fetch-site": "cross-site" }))).toMatch(/refused/);
    expect(crossOriginRefusal(post({ origin: "http://dash.example.com:3000", "sec-fetch-site": "same-site" }))).toMatch(/refused/);
  });

  it("lets the dashboard's own pages through, behind a proxy too, and a script that names no origin", () => {
    expect(crossOriginRefusal(post({ origin: "http://dash.example.com:3000", "sec-fetch-site": "same-origin" }))).toBeNull();
    expect(crossOriginRefusal(post({ origin: "https://dash.example.com", "x-forwarded-host": "dash.example.com" }))).toBeNull();
    expect(crossOriginRefusal(post({}))).toBeNull();
    // What a browser sends for the sign-in form under Referrer-Policy: no-referrer.
    expect(crossOriginRefusal(post({ origin: "null", "sec-fetch-site": "same-origin" }))).toBeNull();
    // A proxy that rewrites Host without X-Forwarded-Host: the browser's word decides.
    expect(crossOriginRefusal(post({ origin: "https://dash.example.com", "sec-fetch-site": "same-origin" }))).toBeNull();
  });
});
