import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './free-port.js';

interface Link {
  readonly client: Socket;
  readonly server: Socket;
  /** Bytes held back while partitioned, per direction, delivered in order on heal (as TCP retransmits them). */
  readonly toServer: Buffer[];
  readonly toClient: Buffer[];
}

/**
 * A TCP proxy between one client and a store that can cut that client off without the store
 * noticing: `partition()` stops every byte both ways, the sockets stay open (a silent partition,
 * not a reset), new connections hang; `heal()` delivers what was held back and resumes. Unlike a
 * real partition, the client's own socket never goes into TCP back-off (it talks to the proxy).
 */
export class BlackholeProxy {
  private readonly links = new Set<Link>();
  private partitioned = false;
  /** Connections accepted while partitioned: they reach the store on heal. */
  private readonly parked: Socket[] = [];

  private constructor(
    private readonly listener: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<BlackholeProxy> {
    const port = await freePort();
    let proxy: BlackholeProxy | undefined;
    const listener = createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', resolve);
    });
    proxy = new BlackholeProxy(listener, port, { host: targetHost, port: targetPort });
    return proxy;
  }

  /** `127.0.0.1:<port>` of the proxy. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get isPartitioned(): boolean {
    return this.partitioned;
  }

  /** Nothing passes either way until `heal()`; connections stay open. */
  partition(): void {
    this.partitioned = true;
  }

  /** Delivers what was held back, in order, and lets traffic through again. */
  heal(): void {
    this.partitioned = false;
    for (const link of this.links) this.flush(link);
    for (const client of this.parked.splice(0)) this.accept(client);
  }

  /** Closes every connection (a reset, as when the store restarts); new ones are accepted. */
  resetConnections(): void {
    for (const link of this.links) this.drop(link);
  }

  async close(): Promise<void> {
    this.resetConnections();
    for (const client of this.parked.splice(0)) client.destroy();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.partitioned) {
      client.pause();
      this.parked.push(client);
      client.on('error', () => client.destroy());
      return;
    }
    const link: Link = { client, server: createConnection(this.target), toServer: [], toClient: [] };
    this.links.add(link);
    client.resume();
    client.on('data', (chunk: Buffer) => this.pass(link, chunk, link.server, link.toServer));
    link.server.on('data', (chunk: Buffer) => this.pass(link, chunk, link.client, link.toClient));
    const end = () => this.drop(link);
    for (const socket of [client, link.server]) {
      socket.on('close', end);
      socket.on('error', end);
    }
  }

  private pass(link: Link, chunk: Buffer, to: Socket, held: Buffer[]): void {
    if (this.partitioned || held.length > 0) held.push(chunk);
    else to.write(chunk);
    if (!this.partitioned) this.flush(link);
  }

  private flush(link: Link): void {
    for (const chunk of link.toServer.splice(0)) link.server.write(chunk);
    for (const chunk of link.toClient.splice(0)) link.client.write(chunk);
  }

  private drop(link: Link): void {
    this.links.delete(link);
    link.client.destroy();
    link.server.destroy();
  }
}
