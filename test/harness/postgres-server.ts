import { execFile, execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

interface ServiceUser {
  readonly uid?: number;
  readonly gid?: number;
  /** How to run a one-shot command as this user. */
  command(file: string, args: string[]): [string, string[]];
}

/** As root: the `postgres` system user (initdb and postgres refuse root). Otherwise: ourselves. */
function serviceUser(): ServiceUser {
  if (process.getuid?.() !== 0) return { command: (file, args) => [file, args] };
  const [uid, gid] = ['-u', '-g'].map((flag) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()),
  );
  return { uid, gid, command: (file, args) => ['runuser', ['-u', 'postgres', '--', file, ...args]] };
}

/**
 * A throwaway PostgreSQL 15 on 127.0.0.1: initdb into a temp dir, then the `postgres` server
 * itself (not pg_ctl, so that the PID we hold is the server's). initdb and postgres refuse to run
 * as root, so as root they run as the `postgres` user.
 */
export class PostgresServer extends ServerProcess {
  private constructor(
    readonly port: number,
    private readonly dataDir: string,
    user: ServiceUser,
  ) {
    super(
      'postgres',
      requireBinary(`${BIN}/postgres`, 'postgresql'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        dataDir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=32MB',
      ],
      user.uid === undefined ? {} : { uid: user.uid, gid: user.gid },
    );
  }

  /** Trust authentication as the `postgres` role, database `postgres`. */
  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PostgresServer> {
    const initdb = requireBinary(`${BIN}/initdb`, 'postgresql');
    const user = serviceUser();
    const dataDir = tempDir('pg');
    if (user.uid !== undefined) chownSync(dataDir, user.uid, user.gid!);
    await run(
      ...user.command(initdb, [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ]),
    );
    const server = new PostgresServer(await freePort(), dataDir, user);
    await server.launch();
    return server;
  }

  /** Fast shutdown (SIGINT: active sessions are disconnected), then the same data dir and port again. */
  async restart(): Promise<void> {
    await this.shutdown();
    await this.launch();
  }

  /** Fast shutdown: clients are disconnected, data is kept. */
  async shutdown(): Promise<void> {
    if (!this.running || this.pid === undefined) return;
    process.kill(this.pid, 'SIGINT');
    await waitUntil('postgres to shut down', () => !this.running, 15_000);
  }

  async launch(): Promise<void> {
    this.start();
    await waitUntil(`postgres on port ${this.port} (output: ${this.recentOutput})`, () => this.isReady(), 30_000, 50);
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.shutdown().catch(() => undefined);
    await this.kill();
    removeDir(this.dataDir);
  }

  private async isReady(): Promise<boolean> {
    if (!this.running) return false;
    const ready = await run(`${BIN}/pg_isready`, ['-q', '-h', '127.0.0.1', '-p', String(this.port)]).then(
      () => true,
      () => false,
    );
    return ready;
  }
}
