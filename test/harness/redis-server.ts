import { execFileSync } from 'node:child_process';
import { freePort } from './free-port.js';
import { requireBinary, ServerProcess, waitUntil } from './server-process.js';
import { createConnection } from 'node:net';

/** A throwaway redis-server on 127.0.0.1 with no persistence. */
export class RedisServer extends ServerProcess {
  private constructor(
    readonly port: number,
    extraArgs: string[] = [],
  ) {
    super('redis', requireBinary('/usr/bin/redis-server', 'redis-server'), [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      // Bound to 127.0.0.1 only; the fault suites' proxies reach it from 127.0.0.2 (see PROXY_ADDRESS),
      // from its first connection on, a restart included.
      '--protected-mode',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      '/tmp',
      // Only matters on a replica: load a full sync from the socket, never through a dump file in the shared dir.
      '--repl-diskless-load',
      'on-empty-db',
      '--repl-diskless-sync-delay',
      '0',
      ...extraArgs,
    ]);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()));
    await server.restart();
    return server;
  }

  /** A replica of `master` (REPLICAOF), resolved once its replication link is up. */
  static async startReplica(master: RedisServer): Promise<RedisServer> {
    const replica = new RedisServer(await freePort(), ['--replicaof', '127.0.0.1', String(master.port)]);
    await replica.restart();
    await master.awaitReplicaOnline(replica.port);
    return replica;
  }

  /**
   * Waits until this master counts the replica on `port` as online and every online replica has
   * acknowledged a write (WAIT): right after a full sync, a first WAIT was seen to time out now and then.
   */
  async awaitReplicaOnline(port: number, timeoutMs = 30_000): Promise<void> {
    await waitUntil(
      `replica ${port} online at ${this.port}`,
      () => {
        const info = this.cli('INFO', 'replication');
        if (!isOnlineReplica(info, port)) return false;
        const online = info.match(/state=online/g)!.length;
        // One redis-cli connection: the WAIT covers the SET before it.
        const acked = execFileSync('redis-cli', ['-p', String(this.port)], {
          encoding: 'utf8',
          input: `SET ndl:harness:replicated 1 PX 1000\nWAIT ${online} 200\n`,
        });
        return Number(acked.trim().split('\n').pop()) >= online;
      },
      timeoutMs,
      50,
    );
  }

  /** (Re)starts on the same port; data is gone (no persistence), as after a crash. */
  async restart(): Promise<void> {
    if (this.running) await this.kill();
    this.start();
    await waitUntil(`redis-server on port ${this.port} (output: ${this.recentOutput})`, () => ping(this.port), 10_000);
  }

  /** Runs a redis-cli command against this server (for test setup and inspection). */
  cli(...args: string[]): string {
    return execFileSync('redis-cli', ['-p', String(this.port), ...args], { encoding: 'utf8' }).trim();
  }
}

/** Whether an `INFO replication` reply of a master lists the replica on `port` as online. */
export function isOnlineReplica(info: string, port: number): boolean {
  return new RegExp(`slave\\d+:ip=[^,]+,port=${port},state=online`).test(info);
}

function ping(port: number): Promise<boolean> {
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
