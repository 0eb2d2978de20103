/**
 * A TCP proxy of the chaos run's own (node:net) between one worker process and an engine, to make the
 * network's faults on demand: latency, a connection cut while a statement is on the wire, a black hole (bytes
 * held, connections kept open, for longer than the lease, then delivered), and a half-close (FIN each way, the
 * sockets left open). Pass-through the rest of the time.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { sleep } from "../lib/subject.js";

/**
 * One direction of one connection: its chunks in the order they were read, each with the time it is due. TCP
 * never reorders a stream, so neither does the proxy: a chunk read after the latency was lifted still waits for
 * the delayed ones before it (a frame overtaking another would be a fault no network makes).
 */
interface Lane {
  queue: Array<{ due: number; send: () => void }>;
  timer: NodeJS.Timeout | null;
}

interface Pair {
  client: Socket;
  server: Socket;
  up: Lane;
  down: Lane;
  /** A statement went towards the engine and no byte has come back since. */
  awaitingReply: boolean;
}

export class FaultProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<Pair>();
  private latencyMs = 0;
  private holding = false;
  private held: Array<() => void> = [];
  /** Called once when a request next goes towards the engine (see dropMidStatement). */
  private waiters: Array<() => void> = [];
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** The engine's URL with its host and port replaced by the proxy's. */
  static rewrite(url: string, port: number): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(port);
    return u.toString();
  }

  static targetOf(url: string, defaultPort: number): { host: string; port: number } {
    const u = new URL(url);
    return { host: u.hostname, port: Number(u.port || defaultPort) };
  }

  async listen(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this.port;
  }

  get connections(): number {
    return this.pairs.size;
  }

  private accept(client: Socket): void {
    const server = connect(this.target.port, this.target.host);
    const pair: Pair = { client, server, awaitingReply: false, up: { queue: [], timer: null }, down: { queue: [], timer: null } };
    this.pairs.add(pair);
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on("error", close).on("close", close);
    server.on("error", close).on("close", close);
    client.on("end", () => server.end());
    server.on("end", () => client.end());
    client.on("data", (chunk: Buffer) => {
      pair.awaitingReply = true;
      this.forward(pair.up, () => server.writable && server.write(chunk));
      for (const wake of this.waiters.splice(0)) wake();
    });
    server.on("data", (chunk: Buffer) => {
      pair.awaitingReply = false;
      this.forward(pair.down, () => client.writable && client.write(chunk));
    });
  }

  /** In order per direction, whatever the latency was when each chunk was read (see Lane). */
  private forward(lane: Lane, send: () => void): void {
    if (this.holding) {
      this.held.push(send);
      return;
    }
    if (this.latencyMs === 0 && lane.queue.length === 0) {
      send();
      return;
    }
    lane.queue.push({ due: Date.now() + this.latencyMs, send });
    if (!lane.timer) this.drain(lane);
  }

  private drain(lane: Lane): void {
    lane.timer = null;
    while (lane.queue.length > 0 && lane.queue[0]!.due <= Date.now()) lane.queue.shift()!.send();
    if (lane.queue.length > 0) lane.timer = setTimeout(() => this.drain(lane), lane.queue[0]!.due - Date.now());
  }

  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /**
   * Cuts (RST) connections while a statement is on the wire: waits up to `withinMs` for connections with a
   * request sent and no reply yet, cuts those; if none showed up, cuts them all. Returns how many were cut
   * mid-statement and in all.
   */
  async dropMidStatement(withinMs = 2000): Promise<{ midStatement: number; cut: number }> {
    let victims = [...this.pairs].filter((p) => p.awaitingReply);
    if (victims.length === 0) {
      // Woken by the next request, not by polling: a loopback reply (a Kafka heartbeat's) can come back between
      // two polls. The wake-up runs before any reply can be read, so the request is still on the wire.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== wake);
          resolve();
        }, withinMs);
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        this.waiters.push(wake);
      });
      victims = [...this.pairs].filter((p) => p.awaitingReply);
    }
    const midStatement = victims.length;
    if (victims.length === 0) victims = [...this.pairs];
    for (const p of victims) {
      p.client.resetAndDestroy();
      p.server.resetAndDestroy();
    }
    return { midStatement, cut: victims.length };
  }

  /** Holds every byte both ways (connections stay open, nothing is refused) for `ms`, then delivers them. */
  async blackHole(ms: number): Promise<void> {
    this.holding = true;
    await sleep(ms);
    this.holding = false;
    const held = this.held;
    this.held = [];
    for (const send of held) send();
  }

  /**
   * Half-close: FIN to the worker and to the engine on every open connection, sockets left open (each side may
   * still write, nothing more is read from the other). Whatever the worker does next is its own handling.
   */
  halfClose(): number {
    let n = 0;
    for (const p of this.pairs) {
      p.client.end();
      p.server.end();
      n++;
    }
    return n;
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.server.destroy();
    }
    this.pairs.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
