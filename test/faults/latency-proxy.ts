import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../harness/free-port.js';

/** Bytes on their way one direction: each chunk leaves `delayMs` after it came, in order. */
export class DelayedLane {
  private readonly queue: { readonly chunk: Buffer; readonly due: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly to: Socket,
    private readonly delayMs: number,
    private readonly blocked: () => boolean,
    /** Called after each chunk is written on. */
    private readonly delivered: () => void = () => undefined,
  ) {}

  push(chunk: Buffer): void {
    this.queue.push({ chunk, due: performance.now() + this.delayMs });
    this.drain();
  }

  /** Writes every chunk that is due, unless the lane is blocked (partitioned): then they wait for the heal. */
  drain(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (!this.blocked() && this.queue.length > 0) {
      const waitMs = this.queue[0].due - performance.now();
      if (waitMs > 0) {
        this.timer = setTimeout(() => this.drain(), waitMs);
        return;
      }
      this.to.write(this.queue.shift()!.chunk);
      this.delivered();
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

interface Link {
  readonly client: Socket;
  readonly server: Socket;
  readonly lanes: readonly DelayedLane[];
}

/**
 * A TCP proxy between one client and a store that adds `delayMs` each way (a store on another
 * machine), and can cut the client off silently: `partition()` holds every byte both ways (nothing
 * in flight is delivered), `heal()` delivers what was held, in order; `holdReplies()` lets requests
 * reach the store and holds its answers, until `heal()`. Or loudly: `refuse()` resets
 * every connection and every new one (nothing held is delivered later), until `admit()`.
 */
export class LatencyProxy {
  private readonly links = new Set<Link>();
  private partitioned = false;
  private repliesHeld = false;
  private refusing = false;
  private readonly deliveryWaiters: (() => void)[] = [];

  private constructor(
    private readonly listener: Server,
    readonly port: number,
    readonly delayMs: number,
  ) {}

  static async start(targetPort: number, delayMs: number): Promise<LatencyProxy> {
    const port = await freePort();
    const listener = createServer({ noDelay: true });
    const proxy = new LatencyProxy(listener, port, delayMs);
    listener.on('connection', (client) => proxy.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', resolve);
    });
    return proxy;
  }

  /** `127.0.0.1:<port>` of the proxy. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  partition(): void {
    this.partitioned = true;
  }

  /**
   * Resolves once the next request from the client has reached the store: its bytes were passed
   * on, and no more came for `quietMs` (a driver may write one request in several pieces).
   */
  async nextDelivery(quietMs = 10): Promise<void> {
    await new Promise<void>((resolve) => this.deliveryWaiters.push(resolve));
    for (;;) {
      const more = new Promise<boolean>((resolve) => this.deliveryWaiters.push(() => resolve(true)));
      const quiet = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), quietMs));
      if (!(await Promise.race([more, quiet]))) return;
    }
  }

  holdReplies(): void {
    this.repliesHeld = true;
  }

  heal(): void {
    this.partitioned = false;
    this.repliesHeld = false;
    for (const link of this.links) for (const lane of link.lanes) lane.drain();
  }

  refuse(): void {
    this.refusing = true;
    for (const link of this.links) this.drop(link, true);
  }

  admit(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.drop(link);
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.refusing) return void client.resetAndDestroy();
    const server = createConnection({ host: '127.0.0.1', port: targetPort, noDelay: true });
    const toServer = new DelayedLane(
      server,
      this.delayMs,
      () => this.partitioned,
      () => {
        for (const resolve of this.deliveryWaiters.splice(0)) resolve();
      },
    );
    const toClient = new DelayedLane(client, this.delayMs, () => this.partitioned || this.repliesHeld);
    const link: Link = { client, server, lanes: [toServer, toClient] };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => toServer.push(chunk));
    server.on('data', (chunk: Buffer) => toClient.push(chunk));
    const end = () => this.drop(link);
    for (const socket of [client, server]) socket.on('close', end).on('error', end);
  }

  private drop(link: Link, reset = false): void {
    this.links.delete(link);
    for (const lane of link.lanes) lane.close();
    if (reset) link.client.resetAndDestroy();
    else link.client.destroy();
    link.server.destroy();
  }
}
