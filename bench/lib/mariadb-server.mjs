// A throwaway MariaDB on a free 127.0.0.1 port, data in a temp dir (same settings as
// test/harness/mariadb-server.ts). As root, it runs as the `mysql` user. Database `locks`, user `ndl`.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.mjs';

/** Starts mariadbd; resolves { url, port, stop() }. */
export async function startMariadb() {
  if (!existsSync('/usr/sbin/mariadbd')) throw new Error('MariaDB is not installed (apt-get install mariadb-server)');
  const asRoot = process.getuid?.() === 0;
  const id = (flag) => Number(execFileSync('id', [flag, 'mysql'], { encoding: 'utf8' }).trim());
  const owner = asRoot ? { uid: id('-u'), gid: id('-g') } : {};
  const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-mariadb-'));
  const tmp = `${dir}-tmp`;
  mkdirSync(tmp);
  if (asRoot) for (const path of [dir, tmp]) chownSync(path, owner.uid, owner.gid);
  const base = ['--no-defaults', `--datadir=${dir}`, `--tmpdir=${tmp}`];
  execFileSync('/usr/bin/mariadb-install-db', [...base, '--auth-root-authentication-method=normal', '--skip-test-db'], {
    ...owner,
    stdio: 'ignore',
  });
  const port = await freePort();
  const socket = join(dir, 'mysqld.sock');
  const child = spawn(
    '/usr/sbin/mariadbd',
    [
      ...base,
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'mysqld.pid')}`,
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
    { ...owner, stdio: 'ignore' },
  );
  const sql = (statements) =>
    execFileSync('/usr/bin/mariadb', ['--no-defaults', `--socket=${socket}`, '--user=root', '-e', statements], {
      stdio: 'ignore',
    });
  const stop = () => {
    child.kill('SIGTERM');
    return new Promise((resolve) => {
      const done = () => {
        for (const path of [dir, tmp]) rmSync(path, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null) return done();
      child.once('exit', done);
    });
  };
  for (let i = 0; ; i++) {
    try {
      sql('SELECT 1');
      break;
    } catch {
      // not up yet
    }
    if (i > 400) {
      await stop();
      throw new Error('mariadbd did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  sql(
    "CREATE DATABASE locks; CREATE USER 'ndl'@'127.0.0.1' IDENTIFIED BY 'ndl'; GRANT ALL ON locks.* TO 'ndl'@'127.0.0.1';",
  );
  return { url: `mysql://ndl:ndl@127.0.0.1:${port}/locks`, port, stop };
}
