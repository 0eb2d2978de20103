import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, start, type Running } from "./support/processes.js";

// The dashboard's live stream (/api/stream) drops a client that vanished without closing it: here a real HTTP
// client on a raw socket that stops reading and never answers the stream's pings, next to one that does.

const DASHBOARD = path.join(REPO_ROOT, "apps", "dashboard");
const PASSWORD = "a long passphrase for the stream test";

describe("the dashboard's live stream and clients that vanish", () => {
  let dashboard: Running;
  let base: string;
  let port: number;
  let cookie: string;
  beforeAll(async () => {
    if (!existsSync(path.join(DASHBOARD, "dist", "manifest.json"))) throw new Error("the dashboard is not built: npm run build -w @jfast/dashboard");
    const { hashPassword } = (await import(path.join(DASHBOARD, "lib", "passwords.mjs"))) as { hashPassword(p: string): Promise<string> };
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    dashboard = start(process.execPath, [path.join(DASHBOARD, "bin", "jfast-dashboard.mjs"), "--port", String(port), "--host", "127.0.0.1"], {
      cwd: DASHBOARD,
      env: {
        NODE_ENV: "production",
        JFAST_DASHBOARD_SECRET: randomBytes(32).toString("hex"),
        // Nothing answers there: the stream pushes the service as down, which is all this test needs.
        JFAST_DASHBOARD_SERVICES: JSON.stringify([{ name: "billing", url: "http://127.0.0.1:9", token: "t".repeat(24) }]),
        JFAST_DASHBOARD_USERS: JSON.stringify([{ name: "olga", role: "viewer", passwordHash: await hashPassword(PASSWORD) }]),
      },
    });
    await dashboard.waitFor("jfast-dashboard", 120_000);
    const login = await fetch(`${base}/api/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
      body: new URLSearchParams({ name: "olga", password: PASSWORD }),
    });
    cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  });
  afterAll(async () => {
    dashboard?.child.kill("SIGTERM");
    await dashboard?.exited;
  });

  /** GET /api/stream on a raw socket; resolves once the stream's first event arrived. */
  function openStream(): Promise<{ socket: net.Socket; received: () => string; ended: () => boolean }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1");
      let text = "";
      let ended = false;
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        const first = text === "";
        text += chunk;
        if (first) resolve({ socket, received: () => text, ended: () => ended });
      });
      socket.on("end", () => (ended = true));
      socket.on("close", () => (ended = true));
      socket.on("error", reject);
      socket.write(`GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nAccept: text/event-stream\r\n\r\n`);
    });
  }

  it("closes, within a minute, a stream whose client stopped reading and answering; keeps one that answers", async () => {
    const silent = await openStream();
    expect(silent.received()).toMatch(/^HTTP\/1\.1 200/);
    // Gone without a word: the connection stays open, nothing is read or answered any more.
    silent.socket.pause();

    const alive = await openStream();
    let answered = 0;
    const answer = setInterval(() => {
      const pings = [...alive.received().matchAll(/event: ping\ndata: (\S+)\n/g)];
      for (const [, id] of pings.slice(answered)) void fetch(`${base}/api/stream/pong?id=${id}`, { method: "POST", headers: { cookie } });
      answered = pings.length;
    }, 500);
    try {
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      // Read what the kernel kept for the silent client: the server has ended its stream by now.
      silent.socket.resume();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(silent.ended()).toBe(true);
      expect(alive.ended()).toBe(false);
      expect(answered).toBeGreaterThanOrEqual(3);
    } finally {
      clearInterval(answer);
      silent.socket.destroy();
      alive.socket.destroy();
    }
  });

  it("refuses a pong without a session, and says when the stream is gone", async () => {
    expect((await fetch(`${base}/api/stream/pong?id=${"a".repeat(22)}`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${base}/api/stream/pong?id=${"a".repeat(22)}`, { method: "POST", headers: { cookie } })).status).toBe(410);
  });
});
