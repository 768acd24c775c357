import { Redis } from 'ioredis';
import { createConnection } from 'node:net';
import { freePort } from './free-port.js';
import { RedisServer } from './redis-server.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

/** What the masters' tests do to one server. */
interface MasterServer {
  readonly port: number;
  readonly url: string;
  readonly running: boolean;
  restart(): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * A redis-server that keeps its data in an append-only file, fsynced on every write, in its own
 * temp dir: after SIGKILL and a restart on the same port it comes back with its keys and their TTLs.
 */
class AofRedisServer extends ServerProcess implements MasterServer {
  private constructor(
    readonly port: number,
    private readonly dataDir: string,
  ) {
    super('redis-aof', requireBinary('/usr/bin/redis-server', 'redis-server'), [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--dir',
      dataDir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
    ]);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<AofRedisServer> {
    const server = new AofRedisServer(await freePort(), tempDir('redis-aof'));
    await server.restart();
    return server;
  }

  async restart(): Promise<void> {
    if (this.running) await this.kill();
    this.start();
    await waitUntil(
      `redis-server (AOF) on port ${this.port} (output: ${this.recentOutput})`,
      () => answersPing(this.port),
      10_000,
    );
  }

  override async stop(): Promise<void> {
    await super.stop();
    removeDir(this.dataDir);
  }
}

/** N independent redis-server masters on 127.0.0.1, for the redlock backend's tests. */
export class RedisMasters {
  private readonly admins = new Map<number, Redis>();

  private constructor(readonly servers: readonly MasterServer[]) {}

  /** Starts `count` masters on free ports: without persistence (RedisServer), or with an fsynced AOF each. */
  static async start(count = 5, persistence: 'none' | 'aof' = 'none'): Promise<RedisMasters> {
    const servers = await Promise.all(
      Array.from({ length: count }, () => (persistence === 'aof' ? AofRedisServer.start() : RedisServer.start())),
    );
    return new RedisMasters(servers);
  }

  get urls(): string[] {
    return this.servers.map((server) => server.url);
  }

  /** SIGKILL: the masters stay down until `restart`. */
  async kill(...indexes: number[]): Promise<void> {
    await Promise.all(indexes.map((i) => this.servers[i].kill()));
  }

  /** Starts the masters again on their ports (a running one is SIGKILLed first). Without persistence they come back empty. */
  async restart(...indexes: number[]): Promise<void> {
    await Promise.all(indexes.map((i) => this.servers[i].restart()));
  }

  /** SIGSTOP: the master accepts connections but answers nothing until `resume`. */
  pause(i: number): void {
    this.servers[i].pause();
  }

  resume(i: number): void {
    this.servers[i].resume();
  }

  /** Runs a command on master `i` through an admin connection of the test. */
  async command(i: number, name: string, ...args: string[]): Promise<unknown> {
    return this.admin(i).call(name, ...args);
  }

  /** Deletes `key` on every running master (as an operator, or a store failure, would). */
  async deleteEverywhere(key: string): Promise<void> {
    await Promise.all(this.servers.map((server, i) => (server.running ? this.admin(i).del(key) : Promise.resolve(0))));
  }

  /** How many masters have `key`. */
  async countHolding(key: string): Promise<number> {
    const found = await Promise.all(
      this.servers.map((server, i) => (server.running ? this.admin(i).exists(key) : Promise.resolve(0))),
    );
    return found.reduce((sum, n) => sum + n, 0);
  }

  async stop(): Promise<void> {
    for (const admin of this.admins.values()) admin.disconnect();
    this.admins.clear();
    await Promise.all(this.servers.map((server) => server.stop()));
  }

  private admin(i: number): Redis {
    let admin = this.admins.get(i);
    if (!admin) {
      // A short disconnectTimeout: ioredis' 2 s default would keep a timer alive after stop() for a master killed by a test.
      admin = new Redis(this.servers[i].url, {
        maxRetriesPerRequest: 1,
        connectTimeout: 1_000,
        disconnectTimeout: 100,
      });
      admin.on('error', () => undefined);
      this.admins.set(i, admin);
    }
    return admin;
  }
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
