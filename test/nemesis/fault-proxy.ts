import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { DelayedLane } from '../faults/latency-proxy.js';
import { freePort } from '../harness/free-port.js';

/**
 * What a {@link FaultProxy} lets through. `open`: everything. `partitioned`: nothing, both ways
 * (bytes are held and delivered after the heal, as TCP retransmits them; new connections are
 * accepted and held). `replies-dropped`: requests reach the store, its replies wait.
 */
export type ProxyMode = 'open' | 'partitioned' | 'replies-dropped';

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

  /**
   * `localAddress`: where the proxy's connections to the store come from (a store's port rules can
   * then tell them from its peers'); `latencyMs`: added to every byte, each way.
   */
  static async start(
    targetPort: number,
    targetHost = '127.0.0.1',
    localAddress?: string,
    latencyMs = 0,
  ): Promise<FaultProxy> {
    const port = await freePort();
    let proxy: FaultProxy | undefined;
    const server = createServer({ noDelay: true }, (client) => proxy!.accept(client, targetHost, localAddress));
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
    for (const pair of this.pairs) for (const lane of pair.lanes) lane.drain();
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) this.drop(pair);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetHost: string, localAddress: string | undefined): void {
    const server = createConnection({ host: targetHost, port: this.targetPort, noDelay: true, localAddress });
    const toServer = new DelayedLane(server, this.latencyMs, () => this.modeNow === 'partitioned');
    const toClient = new DelayedLane(client, this.latencyMs, () => this.modeNow !== 'open');
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
  readonly lanes: readonly DelayedLane[];
}
