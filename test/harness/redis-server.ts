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
      '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp',
      // Only matters on a replica: load a full sync from the socket, never through a dump file in the shared dir.
      '--repl-diskless-load', 'on-empty-db', '--repl-diskless-sync-delay', '0', ...extraArgs,
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
    await waitUntil(`replica ${replica.port} of ${master.port} in sync`, () => replica.cli('INFO', 'replication').includes('master_link_status:up'), 10_000);
    return replica;
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
