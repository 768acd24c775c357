import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../harness/free-port.js';

/**
 * What a {@link FaultProxy} lets through. `open`: everything. `partitioned`: nothing, both ways
 * (bytes are held and delivered after the heal, as TCP retransmits them; new connections are
 * accepted and held). `replies-dropped`: requests reach the store, its replies wait.
 */
export type ProxyMode = 'open' | 'partitioned' | 'replies-dropped';

/**
 * A TCP proxy in front of one store endpoint for one client process, so that this client alone
 * can be cut off from the store, both ways or replies only, and healed.
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
  ) {}

  /** `localAddress`: where the proxy's connections to the store come from (a store's port rules can then tell them from its peers'). */
  static async start(targetPort: number, targetHost = '127.0.0.1', localAddress?: string): Promise<FaultProxy> {
    const port = await freePort();
    let proxy: FaultProxy | undefined;
    const server = createServer({ noDelay: true }, (client) => proxy!.accept(client, targetHost, localAddress));
    proxy = new FaultProxy(server, port, targetPort);
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
    for (const pair of this.pairs) this.apply(pair);
  }

  async close(): Promise<void> {
    for (const { client, server } of this.pairs) {
      client.destroy();
      server.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetHost: string, localAddress: string | undefined): void {
    const server = createConnection({ host: targetHost, port: this.targetPort, noDelay: true, localAddress });
    const pair: Pair = { client, server, toServer: [], toClient: [] };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      if (this.modeNow === 'partitioned') pair.toServer.push(chunk);
      else server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      if (this.modeNow === 'open') client.write(chunk);
      else pair.toClient.push(chunk);
    });
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  }

  /** Delivers what the mode now lets through and was held back. */
  private apply(pair: Pair): void {
    if (this.modeNow !== 'partitioned') for (const chunk of pair.toServer.splice(0)) pair.server.write(chunk);
    if (this.modeNow === 'open') for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  }
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
  /** Bytes held back while partitioned (requests) or while replies are dropped: delivered on the heal, as TCP would retransmit them. */
  readonly toServer: Buffer[];
  readonly toClient: Buffer[];
}
