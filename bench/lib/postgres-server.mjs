// A throwaway PostgreSQL 15 on a free 127.0.0.1 port, data in a temp dir, fsync off (same settings as
// test/harness/postgres-server.ts). As root, initdb and postgres run as the `postgres` user.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.mjs';

const BIN = '/usr/lib/postgresql/15/bin';

/** Starts postgres; resolves { connectionString, port, pid, stop() }. Trust auth as `postgres`, database `postgres`. */
export async function startPostgres() {
  if (!existsSync(`${BIN}/postgres`)) throw new Error('PostgreSQL 15 is not installed (apt-get install postgresql)');
  const asRoot = process.getuid?.() === 0;
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  const owner = asRoot ? { uid: id('-u'), gid: id('-g') } : {};
  const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-pg-'));
  if (asRoot) chownSync(dir, owner.uid, owner.gid);
  execFileSync(
    `${BIN}/initdb`,
    ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { ...owner, stdio: 'ignore' },
  );
  const port = await freePort();
  const child = spawn(
    `${BIN}/postgres`,
    [
      '-D',
      dir,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    { ...owner, stdio: 'ignore' },
  );
  const stop = () => {
    child.kill('SIGINT');
    return new Promise((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null) return done();
      child.once('exit', done);
    });
  };
  for (let i = 0; ; i++) {
    try {
      execFileSync(`${BIN}/pg_isready`, ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      break;
    } catch {
      // not ready yet
    }
    if (i > 400) {
      await stop();
      throw new Error('postgres did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, port, pid: child.pid, stop };
}
