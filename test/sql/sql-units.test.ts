import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createLockBackend, InvalidLockArgumentError, LockBackendError, type BackendOptions } from '../../lib/index.js';
import { MysqlDialect, mysqlTableDdl } from '../../lib/backends/sql/mysql-dialect.js';
import { postgresIndexDdl, postgresTableDdl } from '../../lib/backends/sql/postgres-dialect.js';
import type { PgNotification } from '../../lib/backends/sql/postgres-driver.js';
import { PostgresReleaseListener } from '../../lib/backends/sql/postgres-listener.js';
import { Backoff } from '../../lib/backends/sql/sql-backoff.js';
import { displayKey, keyHash, storedOwner } from '../../lib/backends/sql/sql-keys.js';
import { holderOwnerId, ownerIdPrefix } from '../../lib/engine/holder-identity.js';
import { parseTableName, quoteTableName, releaseChannel } from '../../lib/backends/sql/sql-names.js';

// Unit tests: no database (port 1 refuses connections). The behaviour against real servers is in test/contract/{postgres,mysql}.contract.test.ts.

describe('SQL table names', () => {
  it.each([
    'distributed_locks',
    'Locks2',
    '_x',
    'app.distributed_locks',
    'a'.repeat(63),
    `${'s'.repeat(63)}.${'t'.repeat(63)}`,
  ])('accepts %j', (name) => {
    expect(parseTableName(name, 'postgres').text).toBe(name);
  });

  it.each([
    ['empty', ''],
    ['SQL injection', 'locks; DROP TABLE users'],
    ['quotes', '"locks"'],
    ['backticks', '`locks`'],
    ['leading digit', '1locks'],
    ['three parts', 'db.schema.locks'],
    ['trailing dot', 'locks.'],
    ['64 characters', 'a'.repeat(64)],
    ['a space', 'my locks'],
    ['a hyphen', 'my-locks'],
    ['unicode', 'verrou_é'],
    ['not a string', 42],
  ])('refuses %s with InvalidLockArgumentError', (_name, value) => {
    expect(() => parseTableName(value, 'mysql')).toThrow(InvalidLockArgumentError);
  });

  it('defaults to distributed_locks and quotes each part for its dialect', () => {
    expect(parseTableName(undefined, 'postgres')).toEqual({
      schema: undefined,
      table: 'distributed_locks',
      text: 'distributed_locks',
    });
    expect(quoteTableName(parseTableName('app.Locks', 'postgres'), '"')).toBe('"app"."Locks"');
    expect(quoteTableName(parseTableName('Locks', 'mysql'), '`')).toBe('`Locks`');
  });

  it('derives a NOTIFY channel per table that needs no quoting', () => {
    const channel = releaseChannel(parseTableName('app.locks', 'postgres'));
    expect(channel).toMatch(/^ndl_release_[0-9a-f]{24}$/);
    expect(channel).not.toBe(releaseChannel(parseTableName('locks', 'postgres')));
  });
});

describe('SQL keys and owners', () => {
  it('hashes every key to 64 hex characters, telling apart keys that UTF-8 would merge', () => {
    for (const key of ['a', 'x'.repeat(65_536), '\u0000', '🔒']) expect(keyHash(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(keyHash('\ud800')).not.toBe(keyHash('\udc00')); // both become U+FFFD in UTF-8
    expect(keyHash('a')).not.toBe(keyHash('A'));
  });

  it('keeps the first 200 characters for display, without control characters or lone surrogates', () => {
    expect(displayKey('plain:key')).toBe('plain:key');
    expect(Array.from(displayKey('🔒'.repeat(300)))).toHaveLength(200);
    expect(displayKey('a\u0000b\nc\ud800')).toBe('a\ufffdb\ufffdc\ufffd');
  });

  it('stores short printable owners as they are and hashes the rest', () => {
    expect(storedOwner('host:1:abc:uuid')).toBe('host:1:abc:uuid');
    expect(storedOwner('o'.repeat(500))).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(storedOwner('hôte:1')).toMatch(/^sha256:/);
    expect(storedOwner('o'.repeat(500))).not.toBe(storedOwner('o'.repeat(501)));
  });

  it('stores the longest owner id an engine makes as it is, so its holder identity and age stay readable', () => {
    const longest = holderOwnerId(ownerIdPrefix('ü'.repeat(200)), '𝄞'.repeat(500));
    expect(storedOwner(longest)).toBe(longest);
  });
});

describe('SQL backend options', () => {
  const bad: [string, BackendOptions][] = [
    ['postgres without url or client', { type: 'postgres' }],
    ['postgres with both', { type: 'postgres', url: 'postgres://x', pool: { query() {}, end() {} } }],
    ['postgres with an empty connectionString', { type: 'postgres', url: ' ' }],
    ['postgres with a pool that is not one', { type: 'postgres', pool: {} }],
    ['postgres with a bad table', { type: 'postgres', url: 'postgres://x', table: 'x;y' }],
    ['mysql without url or client', { type: 'mysql' }],
    ['mysql with both', { type: 'mysql', url: 'mysql://x', pool: { execute() {}, end() {} } }],
    ['mysql with a pool that is not one', { type: 'mysql', pool: 'mysql://x' }],
    ['mysql with a bad table', { type: 'mysql', url: 'mysql://x', table: 'a.b.c' }],
  ];
  it.each(bad)('%s → InvalidLockArgumentError', async (_name, options) => {
    await expect(createLockBackend(options)).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it.each<BackendOptions>([
    { type: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' },
    { type: 'mysql', url: 'mysql://nobody@127.0.0.1:1/none' },
  ])(
    'does not connect before the first lock, and ping reports a dead server as LockBackendError ($type)',
    async (options) => {
      const backend = await createLockBackend(options);
      expect(backend.name).toBe(options.type);
      await expect(backend.ping!()).rejects.toBeInstanceOf(LockBackendError);
      await backend.close();
    },
  );
});

describe('polling backoff', () => {
  it('starts at a few ms, grows, and never exceeds 200 ms', () => {
    const backoff = new Backoff();
    const delays = Array.from({ length: 30 }, () => backoff.next());
    expect(delays[0]).toBeGreaterThanOrEqual(2);
    expect(delays[0]).toBeLessThanOrEqual(4);
    expect(Math.max(...delays)).toBeLessThanOrEqual(200);
    expect(Math.min(...delays.slice(10))).toBeGreaterThanOrEqual(100);
  });
});

/** A pg Client stand-in: connects at once, records LISTEN, and lets the test deliver notifications. */
class FakeClient extends EventEmitter {
  readonly queries: string[] = [];
  ended = false;
  async connect(): Promise<void> {}
  async query(text: string) {
    this.queries.push(text);
    return { rows: [], rowCount: 0 };
  }
  async end(): Promise<void> {
    this.ended = true;
  }
  notify(message: PgNotification): void {
    this.emit('notification', message);
  }
}

describe('PostgreSQL release listener', () => {
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  const setup = () => {
    const clients: FakeClient[] = [];
    const listener = new PostgresReleaseListener(() => {
      const client = new FakeClient();
      clients.push(client);
      return client;
    }, 'ndl_release_test');
    return { clients, listener };
  };

  it('LISTENs on its channel and wakes one waiter of the released key per notification, the longest waiting first', async () => {
    const { clients, listener } = setup();
    const woken: string[] = [];
    const leaveFirst = listener.subscribe('k1', () => woken.push('first'));
    listener.subscribe('k1', () => woken.push('second'));
    listener.subscribe('k2', () => woken.push('other key'));
    await flush();
    expect(listener.isListening()).toBe(true);
    expect(clients).toHaveLength(1);
    expect(clients[0].queries).toEqual(['LISTEN "ndl_release_test"']);
    clients[0].notify({ channel: 'ndl_release_test', payload: 'k1' });
    clients[0].notify({ channel: 'another_channel', payload: 'k1' });
    expect(woken).toEqual(['first']);
    // The first waiter leaves without using its wake: the next one gets it.
    leaveFirst(true);
    expect(woken).toEqual(['first', 'second']);
    clients[0].notify({ channel: 'ndl_release_test', payload: 'k1' });
    expect(woken).toEqual(['first', 'second', 'second']);
    await listener.close();
    expect(clients[0].ended).toBe(true);
  });

  it('when the connection fails, wakes every waiter (they poll) and reconnects later, not at once', async () => {
    const { clients, listener } = setup();
    const woken: string[] = [];
    listener.subscribe('k1', () => woken.push('a'));
    listener.subscribe('k2', () => woken.push('b'));
    await flush();
    clients[0].emit('error', new Error('terminating connection due to administrator command'));
    expect(woken.sort()).toEqual(['a', 'b']);
    expect(listener.isListening()).toBe(false);
    expect(clients).toHaveLength(1); // no reconnect storm
    await listener.close();
  });
});

describe('documented DDL', () => {
  it.each(['docs/backends/sql.md'])('in %s matches what the backends create, for both databases', (file) => {
    const docs = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    const table = parseTableName(undefined, 'test');
    expect(docs).toContain(`${postgresTableDdl(table)};\n${postgresIndexDdl(table)};`);
    expect(docs).toContain(`${mysqlTableDdl(table)};`);
  });
});

describe('MySQL statements chosen as deadlock victims', () => {
  const deadlock = () =>
    Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { errno: 1213 });
  /** A pool whose change statements fail as deadlock victims `failures` times, then change one row. */
  function poolFailing(failures: number) {
    const calls: string[] = [];
    const pool = {
      async execute(sql: string) {
        calls.push(sql.split(' ')[0]);
        if (sql.startsWith('UPDATE') && failures-- > 0) throw deadlock();
        return [{ affectedRows: 1 }, undefined] as [unknown, unknown];
      },
      async end() {},
    };
    return { pool, calls };
  }

  it('runs a release or renewal InnoDB rolled back again, and reports the outcome of the run that went through', async () => {
    const { pool, calls } = poolFailing(2);
    const dialect = new MysqlDialect(pool, parseTableName(undefined, 'mysql'), false);
    await expect(dialect.release('hash', 'owner')).resolves.toBe(true);
    expect(calls).toEqual(['UPDATE', 'UPDATE', 'UPDATE']);
    await expect(dialect.renew('hash', 'owner', 1_000)).resolves.toBe(true);
  });

  it('gives up after a bounded number of deadlocks, with the driver error', async () => {
    const { pool, calls } = poolFailing(100);
    const dialect = new MysqlDialect(pool, parseTableName(undefined, 'mysql'), false);
    await expect(dialect.release('hash', 'owner')).rejects.toThrow(/Deadlock/);
    expect(calls).toHaveLength(4);
  });

  it('does not run other failures again', async () => {
    const calls: string[] = [];
    const pool = {
      async execute(sql: string): Promise<[unknown, unknown]> {
        calls.push(sql);
        throw Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 });
      },
      async end() {},
    };
    await expect(
      new MysqlDialect(pool, parseTableName(undefined, 'mysql'), false).release('hash', 'owner'),
    ).rejects.toThrow(/Lock wait timeout/);
    expect(calls).toHaveLength(1);
  });
});
