import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../harness/free-port.js';

/**
 * What a {@link FaultProxy} lets through. `open`: everything. `partitioned`: nothing, both ways
 * (bytes are held and delivered after the heal, as TCP retransmits them; new connections are
 * accepted and held). `replies-dropped`: requests reach the store, its replies wait.
 */
export type ProxyMode = 'open' | 'partitioned' | 'replies-dropped';

/** Bytes on their way in one direction: each chunk leaves `latencyMs` after it came, in order, when the mode lets it through. */
class Lane {
  private readonly queue: { readonly chunk: Buffer; readonly due: number }[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly to: Socket,
    private readonly latencyMs: number,
    private readonly blocked: () => boolean,
  ) {}

  push(chunk: Buffer): void {
    this.queue.push({ chunk, due: performance.now() + this.latencyMs });
    if (this.timer === undefined) this.flush();
  }

  /** Writes what is due, unless blocked (then it waits for the heal, which calls this again). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (!this.blocked() && this.queue.length > 0) {
      const waitMs = this.queue[0]!.due - performance.now();
      if (waitMs > 0) {
        this.timer = setTimeout(() => this.flush(), waitMs);
        return;
      }
      this.to.write(this.queue.shift()!.chunk);
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

/**
 * A TCP proxy in front of one store endpoint for one client process, so that this client alone
 * can be cut off from the store, both ways or replies only, and healed; `latencyMs` delays every
 * byte each way (a store on another machine).
 */
export class FaultProxy {
  private modeNow: ProxyMode = 'open';
  /** Bytes forwarded either way so far (which store endpoint a client mostly talks to). */
  bytes = 0;
  private readonly pairs = new Set<Pair>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly targetPort: number,
    private readonly latencyMs: number,
  ) {}

  /** `localAddress`: where the proxy's connections to the store come from (a store's port rules can then tell them from its peers'). */
  static async start(targetPort: number, { localAddress, latencyMs = 0 }: { localAddress?: string; latencyMs?: number } = {}): Promise<FaultProxy> {
    const port = await freePort();
    let proxy: FaultProxy | undefined;
    const server = createServer({ noDelay: true }, (client) => proxy!.accept(client, localAddress));
    proxy = new FaultProxy(server, port, targetPort, latencyMs);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get mode(): ProxyMode {
    return this.modeNow;
  }

  setMode(mode: ProxyMode): void {
    this.modeNow = mode;
    for (const pair of this.pairs) for (const lane of pair.lanes) lane.flush();
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) this.drop(pair);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, localAddress: string | undefined): void {
    const server = createConnection({ host: '127.0.0.1', port: this.targetPort, noDelay: true, localAddress });
    const toServer = new Lane(server, this.latencyMs, () => this.modeNow === 'partitioned');
    const toClient = new Lane(client, this.latencyMs, () => this.modeNow !== 'open');
    const pair: Pair = { client, server, lanes: [toServer, toClient] };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      toServer.push(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      toClient.push(chunk);
    });
    const end = () => this.drop(pair);
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  }

  private drop(pair: Pair): void {
    this.pairs.delete(pair);
    for (const lane of pair.lanes) lane.close();
    pair.client.destroy();
    pair.server.destroy();
  }
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
  /** To the store and to the client: bytes held back while the mode blocks them are delivered on the heal, as TCP would retransmit them. */
  readonly lanes: readonly Lane[];
}
