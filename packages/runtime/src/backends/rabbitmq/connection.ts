import type { Channel, ChannelModel, ConfirmChannel, Message, SocketOptions } from "amqplib";
import type { DuplexOptions } from "node:stream";
import { BackendError } from "../../errors/jfast-error.js";
import { DOCS, isLoginRefused, redactUrl, translateAmqpError } from "./errors.js";
import type { Outgoing } from "./message.js";
import { importDriver } from "../../core/import-driver.js";

const { default: amqp } = await importDriver("amqplib", () => import("amqplib"));

export interface BackendLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The socket's write buffer before amqplib's writer waits for it to drain (Node's default is 16 KiB). */
const SOCKET_BUFFER_BYTES = 4 << 20;

/** One live AMQP connection. A new one (a new generation) replaces it after the broker comes back. */
export interface Session {
  readonly generation: number;
  readonly model: ChannelModel;
  alive: boolean;
  /** Its node's index in BrokerConnectionOptions.urls. */
  readonly node: number;
  /** Why the connection ended, as amqplib reported it (logged with "lost the RabbitMQ connection"). */
  lostReason?: string;
}

export interface Publication {
  exchange: string;
  routingKey: string;
  message: Outgoing;
}

export interface BrokerConnectionOptions {
  /** The nodes to connect to, in order of preference: several are the nodes of one cluster (see nodeUrls). */
  urls: readonly string[];
  queue: string;
  /** How long an operation waits for the broker (connecting, or reconnecting after a restart) before failing. */
  connectTimeoutMs: number;
  /** Runs on every new connection before anyone uses it: re-declare the topology, re-subscribe the consumer. */
  onSession?: (session: Session) => Promise<void>;
  /** Told when a connection is lost, so holders of its deliveries can forget them. */
  onLost?: (session: Session) => void;
  logger?: BackendLogger | undefined;
}

/**
 * A node that accepts the TCP connection but does not answer the AMQP handshake (seen on a cluster node while
 * another node had just died) would hold the connection attempt forever: after this long without a byte the
 * attempt fails and the next node is tried.
 */
const HANDSHAKE_IDLE_MS = 5000;
/** The same for the set-up on a new connection (declaring the topology, subscribing the consumer). */
const SESSION_SETUP_MS = 30_000;

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 2000;

/**
 * `url` as configured: one AMQP URL, or several separated by commas, the nodes of one cluster
 * (`amqp://guest:guest@10.0.0.1:5672,amqp://guest:guest@10.0.0.2:5672`).
 */
export function nodeUrls(url: string): string[] {
  return url
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/**
 * A connection that comes back by itself. It connects on first use; when the broker closes it (restart,
 * `rabbitmqctl stop_app`, network loss) it reconnects in the background with capped backoff, and every
 * operation waits for it for up to `connectTimeoutMs` instead of failing at once.
 *
 * With several nodes it connects to one at a time. When that connection goes away it tries the next node at
 * once, then the rest in turn, and backs off only after a whole round failed; the new session re-declares the
 * topology and re-subscribes the consumer (onSession). A publish whose confirm was pending on the lost
 * connection fails (BACKEND_UNAVAILABLE): enqueue retries it on the new one (a duplicate, never a loss), an
 * outcome's original delivery goes back to the queue as a lost attempt.
 *
 * Publishing goes through one confirm channel per connection: a publish resolves only when the broker has
 * taken responsibility for the message (persisted and routed), and fails when it was returned as unroutable
 * or the channel died first. Anything not confirmed may or may not have arrived; callers that retry accept a
 * duplicate rather than a loss.
 */
export class BrokerConnection {
  private readonly options: BrokerConnectionOptions;
  private current: Session | null = null;
  private connecting: Promise<Session> | null = null;
  private generation = 0;
  private closed = false;
  private publisher: { session: Session; channel: Promise<ConfirmChannel>; returned: Map<string, number> } | null = null;
  /** The broker's answer to the last login while it is a refusal: waiting for a reconnect will not help. */
  private refusal: unknown = null;
  private readonly refusalWaiters = new Set<(error: unknown) => void>();
  /** The index in options.urls of the node in use, or tried next. */
  private node = 0;

  constructor(options: BrokerConnectionOptions) {
    if (options.urls.length === 0) throw new RangeError("a RabbitMQ connection needs at least one URL");
    this.options = options;
  }

  /** The URL of the node in use (or tried next). */
  get url(): string {
    return this.options.urls[this.node]!;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The live session, waiting for a (re)connection for up to connectTimeoutMs. */
  async session(operation = "reach the broker"): Promise<Session> {
    if (this.closed) throw this.closedError(operation);
    if (this.current?.alive) return this.current;
    this.connecting ??= this.connectLoop();
    // Refused credentials fail the operation now; the loop keeps trying in case they are fixed on the broker.
    if (this.refusal) throw translateAmqpError(this.refusal, this.where(operation));
    let timer: NodeJS.Timeout | undefined;
    let onRefusal: ((error: unknown) => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(translateAmqpError(new Error(`Connection closed: no connection within ${this.options.connectTimeoutMs} ms`), this.where(operation))),
        this.options.connectTimeoutMs,
      );
      timer.unref();
      onRefusal = (error) => reject(translateAmqpError(error, this.where(operation)));
      this.refusalWaiters.add(onRefusal);
    });
    try {
      return await Promise.race([this.connecting, timeout]);
    } finally {
      clearTimeout(timer);
      this.refusalWaiters.delete(onRefusal!);
    }
  }

  /** Opens a short-lived channel for `use` and closes it afterwards. A channel error cannot poison shared state. */
  withChannel<T>(operation: string, use: (channel: Channel) => Promise<T>): Promise<T> {
    return this.withChannels(1, operation, (channels) => use(channels[0]!));
  }

  /** As withChannel, with `count` channels for independent operations that can run side by side. */
  async withChannels<T>(count: number, operation: string, use: (channels: Channel[]) => Promise<T>): Promise<T> {
    const session = await this.session(operation);
    const channels: Channel[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const channel = await session.model.createChannel();
        channel.on("error", () => undefined);
        channels.push(channel);
      }
      return await use(channels);
    } catch (error) {
      throw translateAmqpError(error, this.where(operation));
    } finally {
      await Promise.all(channels.map((channel) => channel.close().catch(() => undefined)));
    }
  }

  /** Publishes with publisher confirms; resolves when every message is confirmed and none was returned. */
  async publish(operation: string, publications: Publication[]): Promise<void> {
    if (publications.length === 0) return;
    const session = await this.session(operation);
    const publisher = this.publisherFor(session);
    let channel: ConfirmChannel;
    try {
      channel = await publisher.channel;
    } catch (error) {
      if (this.publisher === publisher) this.publisher = null;
      throw translateAmqpError(error, this.where(operation));
    }
    // One promise for the batch, not one per message: each confirm counts down, and the batch settles when the
    // last one is in. The first failure in publication order is the one reported, as for one message alone.
    let outstanding = publications.length;
    let failedAt = Infinity;
    let failure: unknown = null;
    let settle!: () => void;
    const confirmed = new Promise<void>((resolve) => (settle = resolve));
    const fail = (index: number, error: unknown) => {
      if (index < failedAt) {
        failedAt = index;
        failure = error;
      }
    };
    const countDown = (n: number) => {
      outstanding -= n;
      if (outstanding === 0) settle();
    };
    // amqplib writes each message to the socket on its own: one system call per message, and the broker reads
    // them one by one. It writes them from a setImmediate that its channel's 'readable' event (a nextTick)
    // schedules; corked until an immediate scheduled after that one, the batch leaves in one writev. A single
    // message is not held back at all.
    const socket = publications.length > 1 ? socketOf(session.model) : null;
    socket?.cork();
    let index = 0;
    try {
      for (; index < publications.length; index++) {
        const p = publications[index]!;
        const at = index;
        const id = p.message.options.messageId ?? "";
        channel.publish(p.exchange, p.routingKey, p.message.content, p.message.options, (error) => {
          if (error) {
            fail(at, error);
          } else {
            // The broker sends basic.return before the confirm of the same message: check it now.
            const returned = publisher.returned.get(id) ?? 0;
            if (returned > 0) {
              if (returned === 1) publisher.returned.delete(id);
              else publisher.returned.set(id, returned - 1);
              fail(
                at,
                new BackendError(`the broker could not route a message for "${p.routingKey}" on exchange "${p.exchange || "(default)"}"`, {
                  code: "BACKEND_TOPOLOGY_MISSING",
                  hint: "the queue or a delay level was deleted on the broker; restart the service so it declares them again",
                  docs: `${DOCS}#names`,
                }),
              );
            }
          }
          countDown(1);
        });
      }
    } catch (error) {
      // publish() throws synchronously on a closed channel; the messages already written still settle.
      fail(index, error);
      countDown(publications.length - index);
    } finally {
      if (socket) process.nextTick(() => setImmediate(() => socket.uncork()));
    }
    await confirmed;
    if (failedAt !== Infinity) throw translateAmqpError(failure, this.where(operation));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const session = this.current;
    this.current = null;
    if (session) {
      session.alive = false;
      await session.model.close().catch(() => undefined);
    }
  }

  private publisherFor(session: Session) {
    if (this.publisher?.session !== session) {
      const returned = new Map<string, number>();
      const publisher = {
        session,
        returned,
        channel: session.model.createConfirmChannel().then((channel) => {
          channel.on("error", () => undefined);
          channel.on("close", () => {
            if (this.publisher === publisher) this.publisher = null;
          });
          channel.on("return", (message: Message) => {
            const id = message.properties.messageId ?? "";
            returned.set(id, (returned.get(id) ?? 0) + 1);
          });
          return channel;
        }),
      };
      publisher.channel.catch(() => undefined);
      this.publisher = publisher;
    }
    return this.publisher;
  }

  private async connectLoop(): Promise<Session> {
    let delay = RECONNECT_MIN_MS;
    let failures = 0;
    for (;;) {
      if (this.closed) throw this.closedError("connect");
      try {
        const session = await this.open();
        this.connecting = null;
        this.refusal = null;
        // After a lost connection or failed attempts: says which node took over.
        if (failures > 0 || session.generation > 1) this.options.logger?.warn("reconnected to RabbitMQ", { url: redactUrl(this.url), attempts: failures + 1 });
        return session;
      } catch (error) {
        failures++;
        const refused = isLoginRefused(error);
        if (refused) {
          this.refusal = error;
          for (const waiter of this.refusalWaiters) waiter(error);
        }
        if (failures === 1 || failures % 20 === 0) {
          this.options.logger?.warn(refused ? "RabbitMQ refused the login (ACCESS_REFUSED); retrying" : "cannot reach RabbitMQ; retrying", {
            url: redactUrl(this.url),
            error: (error as Error).message,
          });
        }
        // The next node at once; a pause only once every node has been tried.
        this.node = (this.node + 1) % this.options.urls.length;
        if (failures % this.options.urls.length !== 0) continue;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(RECONNECT_MAX_MS, delay * 2);
      }
    }
  }

  private async open(): Promise<Session> {
    // noDelay: without it Nagle's algorithm and delayed ACKs add ~40 ms to a publish that follows an ack.
    // writableHighWaterMark: a corked batch of publishes (see publish) stays in the socket's buffer until the
    // uncork; at the default 16 KiB amqplib's writer would stop at the mark and send the rest message by message.
    // amqplib hands its socket options to net.connect, whose socket is a Duplex stream: the mark reaches it.
    const socketOptions: SocketOptions & Pick<DuplexOptions, "writableHighWaterMark"> & { timeout: number } = {
      noDelay: true,
      writableHighWaterMark: SOCKET_BUFFER_BYTES,
      timeout: HANDSHAKE_IDLE_MS,
    };
    const node = this.node;
    const model = await amqp.connect(this.options.urls[node]!, socketOptions);
    const session: Session = { generation: ++this.generation, model, alive: true, node };
    // amqplib reports why a connection ended (a server's close frame, a missed heartbeat, a socket error) on
    // 'error' just before 'close'; the reason goes with the warning.
    model.on("error", (error: Error) => (session.lostReason = error.message));
    model.on("close", (error?: Error) => this.lost(session, error?.message ?? session.lostReason));
    let timer: NodeJS.Timeout | undefined;
    try {
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Connection closed: the node did not finish setting up within ${SESSION_SETUP_MS} ms`)), SESSION_SETUP_MS);
      });
      await Promise.race([this.options.onSession?.(session), stalled]);
      clearTimeout(timer);
    } catch (error) {
      clearTimeout(timer);
      session.alive = false;
      // A stalled node may not answer the close either.
      await Promise.race([model.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      throw error;
    }
    if (this.closed) {
      session.alive = false;
      await model.close().catch(() => undefined);
      throw this.closedError("connect");
    }
    this.current = session;
    return session;
  }

  private lost(session: Session, reason?: string): void {
    const wasAlive = session.alive;
    session.alive = false;
    if (this.current === session) this.current = null;
    if (this.publisher?.session === session) this.publisher = null;
    this.options.onLost?.(session);
    if (wasAlive && !this.closed) {
      const lostUrl = this.options.urls[session.node]!;
      // The node may be gone for good: start with the next one (with one node, the same).
      if (this.node === session.node) this.node = (session.node + 1) % this.options.urls.length;
      this.options.logger?.warn("lost the RabbitMQ connection; reconnecting", {
        url: redactUrl(lostUrl),
        ...(reason ? { reason } : {}),
        ...(this.options.urls.length > 1 ? { next: redactUrl(this.url) } : {}),
      });
      this.connecting ??= this.connectLoop();
      this.connecting.catch(() => undefined);
    }
  }

  private where(operation: string) {
    return { operation, url: this.url, queue: this.options.queue };
  }

  private closedError(operation: string): BackendError {
    return new BackendError(`the RabbitMQ queue "${this.options.queue}" could not ${operation}: the backend was closed`, {
      code: "BACKEND_CLOSED",
      hint: "this backend was closed (jfast.stop()); build a new one",
      docs: DOCS,
    });
  }
}

/** The socket under an amqplib connection (its `connection.stream`), if it has the shape this version has. */
function socketOf(model: unknown): { cork(): void; uncork(): void } | null {
  const stream = (model as { connection?: { stream?: { cork?: unknown; uncork?: unknown } } } | null)?.connection?.stream;
  return stream && typeof stream.cork === "function" && typeof stream.uncork === "function" ? (stream as { cork(): void; uncork(): void }) : null;
}
