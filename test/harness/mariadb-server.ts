import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const run = promisify(execFile);

/** The database and account the tests use (created at first start). */
const DATABASE = 'locks';
const USER = 'ndl';
const PASSWORD = 'ndl-test';

interface ServiceUser {
  readonly uid?: number;
  readonly gid?: number;
  /** How to run a one-shot command as this user. */
  command(file: string, args: string[]): [string, string[]];
}

/** As root: the `mysql` system user (mariadbd refuses root). Otherwise: ourselves. */
function serviceUser(): ServiceUser {
  if (process.getuid?.() !== 0) return { command: (file, args) => [file, args] };
  const [uid, gid] = ['-u', '-g'].map((flag) =>
    Number(execFileSync('id', [flag, 'mysql'], { encoding: 'utf8' }).trim()),
  );
  return { uid, gid, command: (file, args) => ['runuser', ['-u', 'mysql', '--', file, ...args]] };
}

/**
 * A throwaway MariaDB 10.11 on 127.0.0.1: mariadb-install-db into a temp dir, then mariadbd
 * itself (spawned as the service user, so the PID we hold is the server's), with a database
 * `locks` and a password account for TCP clients.
 */
/** MariaDB's temp dir, next to (not inside: it would read as a database) its data dir. */
const tmpDirOf = (dataDir: string) => `${dataDir}-tmp`;

export class MariadbServer extends ServerProcess {
  private constructor(
    readonly port: number,
    private readonly dataDir: string,
    user: ServiceUser,
  ) {
    super(
      'mariadb',
      requireBinary('/usr/sbin/mariadbd', 'mariadb-server'),
      [
        '--no-defaults',
        `--datadir=${dataDir}`,
        `--tmpdir=${tmpDirOf(dataDir)}`,
        `--socket=${join(dataDir, 'mysqld.sock')}`,
        `--pid-file=${join(dataDir, 'mysqld.pid')}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-flush-log-at-trx-commit=2',
        '--innodb-buffer-pool-size=32M',
        '--innodb-log-file-size=16M',
        '--max-connections=300',
        '--performance-schema=OFF',
      ],
      user.uid === undefined ? {} : { uid: user.uid, gid: user.gid },
    );
  }

  get socket(): string {
    return join(this.dataDir, 'mysqld.sock');
  }

  /** The test account over TCP, database `locks`. */
  get uri(): string {
    return `mysql://${USER}:${PASSWORD}@127.0.0.1:${this.port}/${DATABASE}`;
  }

  static async start(): Promise<MariadbServer> {
    const installDb = requireBinary('/usr/bin/mariadb-install-db', 'mariadb-server');
    const user = serviceUser();
    const dataDir = tempDir('mariadb');
    // Its own temp dir: a file of the bootstrap's vanished once from the shared /tmp, aborting the install.
    mkdirSync(tmpDirOf(dataDir));
    if (user.uid !== undefined) for (const dir of [dataDir, tmpDirOf(dataDir)]) chownSync(dir, user.uid, user.gid!);
    await run(
      ...user.command(installDb, [
        '--no-defaults',
        `--datadir=${dataDir}`,
        `--tmpdir=${tmpDirOf(dataDir)}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ]),
    );
    const server = new MariadbServer(await freePort(), dataDir, user);
    await server.launch();
    await server.sql(
      `CREATE DATABASE ${DATABASE}; CREATE USER '${USER}'@'127.0.0.1' IDENTIFIED BY '${PASSWORD}'; ` +
        `GRANT ALL ON ${DATABASE}.* TO '${USER}'@'127.0.0.1';`,
    );
    return server;
  }

  /** Runs SQL as root over the socket (test setup and inspection); resolves the tab-separated output. */
  async sql(statements: string): Promise<string> {
    const { stdout } = await run(requireBinary('/usr/bin/mariadb', 'mariadb-client'), [
      '--no-defaults',
      `--socket=${this.socket}`,
      '--user=root',
      '--batch',
      '--skip-column-names',
      `--database=mysql`,
      '-e',
      statements,
    ]);
    return stdout.trim();
  }

  /** A clean shutdown (SIGTERM), then the same data dir and port again. */
  async restart(): Promise<void> {
    await this.shutdown();
    await this.launch();
  }

  /** Clean shutdown: data is kept. */
  async shutdown(): Promise<void> {
    await this.stop(20_000);
  }

  async launch(): Promise<void> {
    this.start();
    await waitUntil(`mariadbd on port ${this.port} (output: ${this.recentOutput})`, () => this.isReady(), 30_000, 50);
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    removeDir(this.dataDir);
    removeDir(tmpDirOf(this.dataDir));
  }

  private async isReady(): Promise<boolean> {
    if (!this.running) return false;
    const admin = requireBinary('/usr/bin/mariadb-admin', 'mariadb-client');
    return run(admin, ['--no-defaults', `--socket=${this.socket}`, '--user=root', '--connect-timeout=1', 'ping']).then(
      () => true,
      () => false,
    );
  }
}
