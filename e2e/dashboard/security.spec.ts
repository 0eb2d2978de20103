import { request as httpRequest } from "node:http";
import { copyFile, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { DASHBOARD_DIR, E2E_DIR, REPO, eventually, freePort, queueStats, startDashboard, startService, type Installed, type Running } from "./fixtures.js";

/**
 * The dashboard's sign-in and its doors, over real HTTP (docs/security.md): the workspace's build run by its
 * binary in front of a real service with dead letters, and a second service configured but down. No browser:
 * each test sends the requests an attacker would, by hand.
 */
test.describe.configure({ mode: "serial", timeout: 120_000 });

const PASSWORD = "the dashboard's long shared passphrase";
const TOKEN = `operator-${Date.now()}-security`;
/** What the dead letters of the service hold: none of it may reach a request without a person. */
const SECRET_TEXT = ["card declined for invoice", "4242424242424242", "security.charge"];

/** The workspace's packages as a folder of its own: the service imports @jfast/runtime through node_modules. */
async function workspaceFolder(): Promise<Installed> {
  const dir = await mkdtemp(path.join(tmpdir(), "jfast-dashboard-security-"));
  await symlink(path.join(REPO, "node_modules"), path.join(dir, "node_modules"));
  await copyFile(path.join(E2E_DIR, "dashboard", "fixture-service.mjs"), path.join(dir, "fixture-service.mjs"));
  return { dir, bin: path.join(DASHBOARD_DIR, "bin", "jfast-dashboard.mjs"), dashboardBytes: 0, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** The header a Next.js client sends on a client-side navigation: the route tree it already has (here /queues). */
const SIBLING_TREE = encodeURIComponent(JSON.stringify(["", { children: ["(console)", { children: ["queues", { children: ["__PAGE__", {}] }] }] }]));

/**
 * GETs `url` as a Next.js client would, following Next's own redirects (it sends an RSC request without the
 * `_rsc` cache key to the same URL with one), but not one to the login page: that answer is the one returned.
 */
async function navigate(url: string, headers: Record<string, string>): Promise<Response> {
  let answer = await fetch(url, { headers, redirect: "manual" });
  for (let hops = 0; hops < 3 && answer.status === 307; hops++) {
    const location = answer.headers.get("location")!;
    if (/\/login(\?|$)/.test(location)) break;
    await answer.body?.cancel();
    answer = await fetch(new URL(location, url), { headers, redirect: "manual" });
  }
  return answer;
}

/** Peak resident memory of a process (VmHWM), in bytes. */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

/**
 * POSTs `total` bytes of form data in 64 KB chunks, without a Content-Length; stops sending once answered. A server
 * that answers and closes while the body is still coming may reset the connection before its answer is read (the
 * client's next write fails with EPIPE or ECONNRESET): that is a refusal too, and `status` is then 0.
 */
function streamBody(url: string, total: number, headers: Record<string, string> = {}): Promise<{ status: number; sent: number; closedBy?: string }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const request = httpRequest(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked", ...headers } }, (response) => {
      answered = true;
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0, sent }));
    });
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (answered) return;
      if (error.code === "EPIPE" || error.code === "ECONNRESET") resolve({ status: 0, sent, closedBy: error.code });
      else reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!answered && sent < total && !request.destroyed) {
        sent += chunk.length;
        if (!request.write(sent === chunk.length ? Buffer.concat([Buffer.from("name=admin&password="), chunk]) : chunk)) return void request.once("drain", pump);
      }
      if (!request.destroyed) request.end();
    };
    pump();
  });
}

let folder: Installed;
let service: Running;
let dashboard: Running;
let downUrl: string;
let cookie: string;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  folder = await workspaceFolder();
  service = await startService({ installed: folder, name: "security", backend: "memory", tokens: `ops:operator:${TOKEN}` });
  await fetch(`${service.url}/fail?count=2`, { method: "POST" });
  await eventually("2 dead letters", async () => (await queueStats(service.url)).depths.dead === 2);
  downUrl = `http://127.0.0.1:${await freePort()}`;
  dashboard = await startDashboard(folder, {
    password: PASSWORD,
    services: [
      { name: "security", url: service.url, token: TOKEN },
      { name: "ledger", url: downUrl, token: "a-token-for-a-service-that-is-down" },
    ],
  });
  const signIn = await fetch(`${dashboard.url}/api/login`, { method: "POST", body: new URLSearchParams({ name: "admin", password: PASSWORD }), redirect: "manual" });
  expect(signIn.status).toBe(303);
  cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
});

test.afterAll(async () => {
  await dashboard?.stop();
  await service?.stop();
  await folder?.cleanup();
});

test("a console page fetched as a client-side navigation without a cookie answers no data, only the way to the login", async () => {
  // Signed in, the same request carries the dead letters: the check below is about the person, not the request.
  // (The page carries its first data only when the service answers within the dashboard's 1 s budget: on a
  // loaded machine the first, cold request may ship without it, so it is asked again.)
  await eventually("the signed-in page carries the dead letters", async () => {
    const signedIn = await navigate(`${dashboard.url}/dead-letters`, { cookie, rsc: "1", "next-router-state-tree": SIBLING_TREE });
    expect(signedIn.status).toBe(200);
    return (await signedIn.text()).includes(SECRET_TEXT[0]!);
  });

  for (const page of ["/dead-letters", "/audit", "/outbox", "/queues", "/jobs", "/schedules", "/"]) {
    for (const extra of [{}, { "next-router-prefetch": "1" }] as Record<string, string>[]) {
      const answer = await navigate(`${dashboard.url}${page}`, { rsc: "1", "next-router-state-tree": SIBLING_TREE, ...extra });
      const body = await answer.text();
      for (const text of SECRET_TEXT) expect(body, `${page} ${JSON.stringify(extra)}`).not.toContain(text);
      expect([307, 401], `${page} answered ${answer.status}`).toContain(answer.status);
      if (answer.status === 307) expect(answer.headers.get("location")).toMatch(/\/login(\?|$)/);
    }
  }
  // The API and the live stream refuse too, and a forged or stale cookie opens nothing.
  for (const [url, headers] of [
    ["/api/admin/security/deadLetters.list?input=%7B%7D", {}],
    ["/api/stream", {}],
    ["/dead-letters", { cookie: "jfast_session=forged.value", rsc: "1", "next-router-state-tree": SIBLING_TREE }],
  ] as const) {
    const answer = await navigate(`${dashboard.url}${url}`, headers);
    expect([307, 401], `${url} answered ${answer.status}`).toContain(answer.status);
    const body = await answer.text();
    for (const text of SECRET_TEXT) expect(body).not.toContain(text);
  }
  // The login page itself stays open; any other path is sent there, with the security headers; signed in, an
  // unknown path is a 404.
  expect((await fetch(`${dashboard.url}/login`)).status).toBe(200);
  const unknown = await fetch(`${dashboard.url}/no-such-page`, { redirect: "manual" });
  expect(unknown.status).toBe(307);
  expect(unknown.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect((await fetch(`${dashboard.url}/no-such-page`, { headers: { cookie } })).status).toBe(404);
});

test("a sign-in POST from another origin is refused with 403, before any password is checked", async () => {
  const post = (headers: Record<string, string>) =>
    fetch(`${dashboard.url}/api/login`, { method: "POST", body: new URLSearchParams({ name: "admin", password: PASSWORD }), redirect: "manual", headers });
  const foreign: Record<string, string>[] = [{ origin: "https://evil.example" }, { origin: "null" }, { origin: dashboard.url.replace("127.0.0.1", "localhost") }, { "sec-fetch-site": "cross-site" }, { origin: "null", "sec-fetch-site": "cross-site" }];
  for (const headers of foreign) {
    const answer = await post(headers);
    expect(answer.status, JSON.stringify(headers)).toBe(403);
    expect(answer.headers.get("set-cookie")).toBeNull();
  }
  // Its own origin (a browser sends it), or none (a script), signs in.
  expect((await post({ origin: dashboard.url })).status).toBe(303);
  expect((await post({ origin: dashboard.url, "sec-fetch-site": "same-origin" })).status).toBe(303);
  // What a browser sends for the sign-in form under the dashboard's Referrer-Policy: no-referrer.
  expect((await post({ origin: "null", "sec-fetch-site": "same-origin" })).status).toBe(303);
});

test("a sign-in body over 8 KB is refused with 413 before it is parsed, by its length or as it streams", async () => {
  const big = new URLSearchParams({ name: "admin", password: "x".repeat(16 * 1024) });
  const declared = await fetch(`${dashboard.url}/api/login`, { method: "POST", body: big, redirect: "manual" });
  expect(declared.status).toBe(413);
  // No Content-Length: 48 MB streamed; the dashboard stops reading after 8 KB and its peak memory barely moves.
  const pid = dashboard.process.pid!;
  const before = await peakRss(pid);
  const total = 48 * 1024 * 1024;
  const streamed = await streamBody(`${dashboard.url}/api/login`, total);
  // Answered 413, or the connection closed by the dashboard under the client's writes; either way long before the
  // 48 MB were sent: a server that read the whole body first would have let all of it through.
  if (streamed.status !== 0) expect(streamed.status).toBe(413);
  expect(streamed.sent).toBeLessThan(total / 2);
  const grown = (await peakRss(pid)) - before;
  console.log(`48 MB streamed sign-in body: ${streamed.status ? `answered ${streamed.status}` : `connection closed by the dashboard (${streamed.closedBy})`} after ${(streamed.sent / 1024).toFixed(0)} KB sent; peak RSS grew ${(grown / 1e6).toFixed(1)} MB`);
  expect(grown).toBeLessThan(24 * 1024 * 1024);
  // A form of ordinary size still signs in.
  expect((await fetch(`${dashboard.url}/api/login`, { method: "POST", body: new URLSearchParams({ name: "admin", password: PASSWORD }), redirect: "manual" })).status).toBe(303);
});

test("a 502 for a service that is down names the service, never its address; the log has the address", async () => {
  const answer = await fetch(`${dashboard.url}/api/admin/ledger/overview.get`, { headers: { cookie } });
  expect(answer.status).toBe(502);
  const body = await answer.text();
  expect(body).not.toContain(downUrl.replace("http://", ""));
  expect(body).not.toContain("127.0.0.1");
  const message: string = JSON.parse(body).error.message;
  expect(message).toContain("ledger");
  expect(message).not.toMatch(/ECONNREFUSED|https?:|:\d{2,5}\b/);
  await eventually("the log line naming the address", async () => dashboard.output().includes(downUrl));
});

// Last: it locks this address (127.0.0.1) out of the dashboard.
test("40 wrong passwords in parallel, then the right one: it is refused, and at most five were checked", async () => {
  const login = (password: string) => fetch(`${dashboard.url}/api/login`, { method: "POST", body: new URLSearchParams({ name: "admin", password }), redirect: "manual" });
  const checkedBefore = dashboard.output().split("\n").filter((l) => l.includes('"msg":"dashboard sign-in failed"')).length;
  const wrong = Array.from({ length: 40 }, (_, i) => login(`wrong guess ${i}`));
  // The right password, sent as soon as one wrong guess was refused unchecked (429) while the others may still be
  // in flight: a fixed pause let it reach the dashboard first on a loaded machine, ahead of the guesses, and pass.
  await Promise.any(wrong.map(async (p) => {
    if ((await p).status !== 429) throw new Error("checked, not refused");
  }));
  const right = await login(PASSWORD);
  const statuses = await Promise.all(wrong.map(async (p) => (await p).status));
  expect(right.status).toBe(429);
  expect(right.headers.get("set-cookie")).toBeNull();
  expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(statuses.filter((s) => s === 303).length).toBeLessThanOrEqual(4);
  const checked = dashboard.output().split("\n").filter((l) => l.includes('"msg":"dashboard sign-in failed"')).length - checkedBefore;
  expect(checked).toBeLessThanOrEqual(5);
  // Still locked after they all finished.
  expect((await login(PASSWORD)).status).toBe(429);
});
