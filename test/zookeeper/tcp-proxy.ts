import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** ZooKeeper's opcode of a create request. */
const OP_CREATE = 1;

interface Link {
  readonly client: Socket;
  readonly server: Socket;
  /** Answers from the server are thrown away (a lost reply). */
  dropReplies: boolean;
}

/**
 * A TCP proxy in front of a ZooKeeper server that injects network faults: cut every connection
 * (a partition), or let the next create request through and lose its answer. Understands just
 * enough of ZooKeeper's framing (4-byte length, then xid and opcode) to find a create.
 */
export class TcpProxy {
  private readonly links = new Set<Link>();
  private refusing = false;
  private loseCreateReply = false;
  /** Resolves when an armed create request went through and its answer was dropped. */
  private onCreateLost: (() => void) | undefined;
  /** Resolves when an armed reply was cut short. */
  private onReplyTorn: (() => void) | undefined;

  private constructor(
    private readonly listener: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const listener = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(listener, (listener.address() as { port: number }).port);
    return proxy;
  }

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Drops every connection and refuses new ones until `restore()`. */
  cut(): void {
    this.refusing = true;
    for (const link of this.links) this.drop(link);
  }

  restore(): void {
    this.refusing = false;
  }

  /** The next create request reaches the server, but its answer never reaches the client: the connection closes instead. */
  loseNextCreateReply(): Promise<void> {
    this.loseCreateReply = true;
    return new Promise((resolve) => (this.onCreateLost = resolve));
  }

  /**
   * The next reply (after a handshake) reaches the client only in part, its length and a few bytes,
   * and the connection closes: a connection broken in the middle of a reply.
   */
  tearNextReply(): Promise<void> {
    return new Promise((resolve) => (this.onReplyTorn = resolve));
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const link: Link = {
      client,
      server: createConnection({ host: '127.0.0.1', port: targetPort }),
      dropReplies: false,
    };
    this.links.add(link);
    let pending = Buffer.alloc(0);
    let sawConnectRequest = false;
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(0, 4 + pending.readInt32BE(0));
        pending = pending.subarray(frame.length);
        const isCreate = sawConnectRequest && frame.length >= 12 && frame.readInt32BE(8) === OP_CREATE;
        sawConnectRequest = true;
        link.server.write(frame);
        if (isCreate && this.loseCreateReply) {
          this.loseCreateReply = false;
          link.dropReplies = true;
          // Give the server time to apply it, then break the connection with the answer unsent.
          setTimeout(() => {
            this.drop(link);
            this.onCreateLost?.();
          }, 200);
          return;
        }
      }
    });
    let sawConnectReply = false;
    link.server.on('data', (chunk: Buffer) => {
      if (link.dropReplies) return;
      const tear = sawConnectReply ? this.onReplyTorn : undefined;
      sawConnectReply = true;
      if (!tear || chunk.length < 8) {
        client.write(chunk);
        return;
      }
      this.onReplyTorn = undefined;
      link.dropReplies = true;
      client.write(chunk.subarray(0, 6), () => {
        this.drop(link);
        tear();
      });
    });
    const end = () => this.drop(link);
    client.on('close', end);
    link.server.on('close', end);
    client.on('error', end);
    link.server.on('error', end);
  }

  private drop(link: Link): void {
    this.links.delete(link);
    link.client.destroy();
    link.server.destroy();
  }
}
