import { spawn } from "node:child_process";
import { JFAST_BIN } from "./jfast-process.js";

export interface DetachedJfast {
  pid: number;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  exited: Promise<number | null>;
  /** Resolves once the output matches; rejects when the process exits first or after `timeoutMs`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** SIGKILL to the whole process group (whatever the test left running). */
  killGroup(): void;
}

/** `jfast <args>` as the leader of its own process group, so a test can stop it and everything it started. */
export function startDetached(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): DetachedJfast {
  const child = spawn(process.execPath, [JFAST_BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, JFAST_DEBUG: "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  let closed = false;
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  void exited.then(() => (closed = true));
  return {
    pid: child.pid!,
    output: () => output,
    exited,
    async waitFor(text, timeoutMs = 30_000) {
      const seen = () => (typeof text === "string" ? output.includes(text) : text.test(output));
      for (const deadline = Date.now() + timeoutMs; !seen(); ) {
        if (closed) throw new Error(`jfast exited before printing ${text}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${text}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    killGroup() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/** The URL of the "http listening" line. */
export function listeningUrl(output: string): string {
  const line = output.split("\n").find((l) => l.includes('"msg":"http listening"'));
  if (!line) throw new Error(`no "http listening" line:\n${output}`);
  return String((JSON.parse(line) as { url: unknown }).url);
}
