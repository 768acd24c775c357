import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createLockBackend, LockEngine, type BackendOptions } from '../../lib/index.js';
import { MariadbServer } from '../harness/mariadb-server.js';
import { PostgresServer } from '../harness/postgres-server.js';
import { removeDir, tempDir, waitUntil } from '../harness/server-process.js';
import { expectLoginRefused } from './login-checks.js';
import { makeTestCertificates, type TestCertificates } from './tls-certs.js';

// The harness servers trust every local connection (PostgreSQL) or know one account (MariaDB):
// the tests add accounts with passwords, a PostgreSQL account that must use TLS, and TLS itself.
const PG_USER = 'pwuser';
const PG_TLS_USER = 'tlsuser';
const PASSWORD = 'right-pw-1';

let postgres: PostgresServer;
let mariadb: MariadbServer;
let certs: TestCertificates;
let engines: LockEngine[] = [];

async function engineFor(options: BackendOptions): Promise<LockEngine> {
  const engine = new LockEngine(await createLockBackend(options), {
    keyPrefix: 'sqlcreds:',
    leaseMs: 10_000,
    waitMs: 0,
  });
  engines.push(engine);
  return engine;
}

async function expectWorking(options: BackendOptions): Promise<void> {
  const engine = await engineFor(options);
  const lock = await engine.acquire(`k:${Math.random()}`);
  expect(await engine.tryAcquire(lock.key)).toBeNull();
  await lock.release();
  await expect(engine.backend.ping!()).resolves.toBeUndefined();
}

/** Refused at login: LockBackendError (not busy) within a second, and the password is not in the message. */
async function expectRefused(options: BackendOptions, message: RegExp): Promise<void> {
  await expectLoginRefused(await engineFor(options), { message, withinMs: 1_000, secret: 'wrong-pw' });
}

/** Password accounts, TLS on (a reload is enough since PostgreSQL 10), and an account that may connect only over TLS. */
async function preparePostgres(admin: pg.Pool): Promise<void> {
  const sslDir = tempDir('pg-ssl');
  for (const file of ['server.crt', 'server.key']) copyFileSync(join(certs.dir, file), join(sslDir, file));
  chmodSync(join(sslDir, 'server.key'), 0o600);
  if (process.getuid?.() === 0) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
    for (const file of ['server.crt', 'server.key', '']) chownSync(join(sslDir, file), uid, gid);
  }
  const hbaFile = (await admin.query('SHOW hba_file')).rows[0].hba_file as string;
  const rules = [
    `hostnossl all ${PG_TLS_USER} 127.0.0.1/32 reject`,
    `host all ${PG_USER},${PG_TLS_USER} 127.0.0.1/32 scram-sha-256`,
  ];
  writeFileSync(hbaFile, `${rules.join('\n')}\n${readFileSync(hbaFile, 'utf8')}`);
  for (const user of [PG_USER, PG_TLS_USER]) await admin.query(`CREATE ROLE ${user} LOGIN PASSWORD '${PASSWORD}'`);
  await admin.query(`ALTER SYSTEM SET ssl_cert_file = '${join(sslDir, 'server.crt')}'`);
  await admin.query(`ALTER SYSTEM SET ssl_key_file = '${join(sslDir, 'server.key')}'`);
  await admin.query('ALTER SYSTEM SET ssl = on');
  await admin.query('SELECT pg_reload_conf()');
  // The lease table made by a first lock as the owner; the accounts only read and write it (no CREATE on public since PG 15).
  const owner = new LockEngine(await createLockBackend({ type: 'postgres', url: postgres.connectionString }));
  await (await owner.acquire('create-the-table')).release();
  await owner.close();
  await admin.query(`GRANT SELECT, INSERT, UPDATE ON distributed_locks TO ${PG_USER}, ${PG_TLS_USER}`);
}

beforeAll(async () => {
  const dir = tempDir('sql-certs');
  certs = makeTestCertificates(dir);
  [postgres, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  const admin = new pg.Pool({ connectionString: postgres.connectionString, max: 1 });
  await preparePostgres(admin);
  await admin.end();
  await mariadb.sql(
    `CREATE USER 'pwuser'@'127.0.0.1' IDENTIFIED BY '${PASSWORD}'; GRANT ALL ON locks.* TO 'pwuser'@'127.0.0.1';`,
  );
}, 60_000);
afterEach(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
  engines = [];
});
afterAll(async () => {
  await Promise.allSettled([postgres?.destroy(), mariadb?.destroy()]);
  if (certs) removeDir(certs.dir);
});

describe('postgres backend with credentials and TLS', () => {
  const url = (user: string, password: string, query = '') =>
    `postgres://${user}:${password}@127.0.0.1:${postgres.port}/postgres${query}`;
  const verifyFull = () => `?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.caFile)}`;

  it('logs in with the password in the connection string (scram-sha-256)', () =>
    expectWorking({ type: 'postgres', url: url(PG_USER, PASSWORD) }));
  it('a wrong password is LockBackendError (28P01), quickly', () =>
    expectRefused({ type: 'postgres', url: url(PG_USER, 'wrong-pw') }, /password authentication failed/));
  it('passes sslmode/sslrootcert of the URL to pg: a TLS-only account works over verified TLS', () =>
    expectWorking({ type: 'postgres', url: url(PG_TLS_USER, PASSWORD, verifyFull()) }));
  it("the backend's own LISTEN connection uses the URL's TLS and password too: a waiter is woken by NOTIFY", async () => {
    const options: BackendOptions = { type: 'postgres', url: url(PG_TLS_USER, PASSWORD, verifyFull()) };
    const [holder, waiter] = [await engineFor(options), await engineFor(options)];
    const lock = await holder.acquire('listen');
    const waiting = waiter.acquire('listen', { waitMs: 10_000 });
    const admin = new pg.Pool({ connectionString: postgres.connectionString, max: 1 });
    try {
      // pg_hba refuses this account without TLS, so a LISTEN session of it proves the listener logged in over TLS.
      const listening = `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.usename = '${PG_TLS_USER}' AND a.query LIKE 'LISTEN%' AND s.ssl`;
      await waitUntil(
        'the LISTEN connection over TLS',
        async () => (await admin.query(listening)).rows[0].n >= 1,
        5_000,
      );
    } finally {
      await admin.end();
    }
    const released = performance.now();
    await lock.release();
    await (await waiting).release();
    expect(performance.now() - released).toBeLessThan(500); // NOTIFY, not the 1 s re-check
  });
  it('the TLS-only account without TLS is refused: LockBackendError', () =>
    expectRefused({ type: 'postgres', url: url(PG_TLS_USER, PASSWORD) }, /no encryption|pg_hba/));
  it('a pool of yours with its own ssl options is used as it is', async () => {
    const pool = new pg.Pool({ connectionString: url(PG_TLS_USER, PASSWORD), ssl: { ca: certs.ca }, max: 2 });
    try {
      await expectWorking({ type: 'postgres', client: pool });
    } finally {
      await pool.end();
    }
  });
});

describe('mysql backend (MariaDB) with credentials', () => {
  const uri = (user: string, password: string) => `mysql://${user}:${password}@127.0.0.1:${mariadb.port}/locks`;

  it('logs in with the password in the URI', () => expectWorking({ type: 'mysql', url: uri('pwuser', PASSWORD) }));
  it('a wrong password is LockBackendError (access denied), quickly', () =>
    expectRefused({ type: 'mysql', url: uri('pwuser', 'wrong-pw') }, /Access denied/));
  it('an unknown user is LockBackendError', () =>
    expectRefused({ type: 'mysql', url: uri('nobody', 'wrong-pw') }, /Access denied/));
});
