/**
 * The stores' old option names keep working: each is renamed to the current one, warns once per
 * process (a DeprecationWarning with its own code), and given together with the current name is
 * refused. No server is needed: backends connect on their first lock, not when created.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createLockBackend, InvalidLockArgumentError, type BackendOptions } from '../../lib/index.js';
import { deprecationCode, renameDeprecatedOptions } from '../../lib/backends/deprecated-options.js';
import { resolveZookeeperOptions } from '../../lib/backends/zookeeper/zookeeper-options.js';
import { resolveEtcdOptions } from '../../lib/backends/etcd/etcd-options.js';

let emitWarning: jest.Mock<(message: string | Error, options?: unknown) => void>;
beforeAll(() => {
  emitWarning = jest
    .spyOn(process as unknown as { emitWarning: (message: string | Error, options?: unknown) => void }, 'emitWarning')
    .mockImplementation(() => undefined) as never;
});
afterAll(() => emitWarning.mockRestore());

const warningsWith = (code: string) =>
  emitWarning.mock.calls.filter((call) => (call[1] as { code?: string } | undefined)?.code === code);

const ALIASES: [
  type: BackendOptions['type'],
  old: string,
  oldValue: unknown,
  current: string,
  currentValue: unknown,
][] = [
  ['postgres', 'connectionString', 'postgres://app@127.0.0.1:1/app', 'url', 'postgres://app@127.0.0.1:1/app'],
  ['mysql', 'uri', 'mysql://app@127.0.0.1:1/app', 'url', 'mysql://app@127.0.0.1:1/app'],
  ['zookeeper', 'connectionString', '127.0.0.1:1/app', 'url', '127.0.0.1:1/app'],
  ['etcd', 'hosts', ['http://127.0.0.1:1'], 'urls', ['http://127.0.0.1:1']],
  ['etcd', 'leaseTtlSeconds', 7, 'leaseTtlMs', 7_000],
];
/** What each store needs besides the option under test. */
const BASE: Partial<Record<BackendOptions['type'], Record<string, unknown>>> = { etcd: { urls: 'http://127.0.0.1:1' } };

describe('deprecated store option names', () => {
  it.each(ALIASES)(
    '%s %s: renamed to %s, warns once per process, builds the backend',
    async (type, old, oldValue, current, currentValue) => {
      const base = old === 'hosts' ? {} : (BASE[type] ?? {});
      const options = { type, ...base, [old]: oldValue } as BackendOptions;
      expect(renameDeprecatedOptions(options)).toEqual({ type, ...base, [current]: currentValue });
      const code = deprecationCode(type, old);
      expect(code).toMatch(/^NDL_DEP_[A-Z_]+$/);
      for (let i = 0; i < 2; i++) {
        const backend = await createLockBackend(options);
        expect(backend.name).toBe(type);
        await backend.close();
      }
      const warnings = warningsWith(code);
      expect(warnings).toHaveLength(1);
      expect(warnings[0][0]).toContain(`"${old}" is deprecated: use "${current}"`);
      expect(warnings[0][1]).toMatchObject({ type: 'DeprecationWarning', code });
    },
  );

  it.each([
    ['postgres', 'pool'],
    ['mysql', 'pool'],
  ] as const)('%s %s: renamed to client, warns once', (type, old) => {
    const pool = { query: () => undefined };
    expect(renameDeprecatedOptions({ type, [old]: pool })).toEqual({ type, client: pool });
    renameDeprecatedOptions({ type, [old]: pool });
    expect(warningsWith(deprecationCode(type, old))).toHaveLength(1);
  });

  it('etcd leaseTtlMs is rounded up to whole seconds; the old leaseTtlSeconds gives the same lease', () => {
    expect(resolveEtcdOptions({ type: 'etcd', urls: 'http://127.0.0.1:1', leaseTtlMs: 2_500 }).leaseTtlSeconds).toBe(3);
    const renamed = renameDeprecatedOptions({
      type: 'etcd',
      urls: 'http://127.0.0.1:1',
      leaseTtlSeconds: 3,
    });
    expect(resolveEtcdOptions(renamed as never).leaseTtlSeconds).toBe(3);
  });

  it.each([
    [
      'postgres',
      { url: 'postgres://a@h/db', connectionString: 'postgres://a@h/db' },
      /give url, not both url and connectionString/,
    ],
    ['postgres', { client: {}, pool: {} }, /give client, not both client and pool/],
    ['mysql', { url: 'mysql://a@h/db', uri: 'mysql://a@h/db' }, /give url, not both url and uri/],
    ['zookeeper', { url: 'h:2181', connectionString: 'h:2181' }, /give url, not both url and connectionString/],
    ['etcd', { urls: 'http://h:2379', hosts: 'http://h:2379' }, /give urls, not both urls and hosts/],
    [
      'etcd',
      { urls: 'http://h:2379', leaseTtlMs: 5_000, leaseTtlSeconds: 5 },
      /give leaseTtlMs, not both leaseTtlMs and leaseTtlSeconds/,
    ],
  ] as const)('%s: an option under both names is refused (%j)', async (type, fields, message) => {
    const error = await createLockBackend({ type, ...fields }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toMatch(message);
  });

  it('a bad deprecated leaseTtlSeconds is refused under its own name', async () => {
    const error = await createLockBackend({
      type: 'etcd',
      urls: 'http://h:2379',
      leaseTtlSeconds: 1.5,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toMatch(
      /leaseTtlSeconds \(deprecated: use leaseTtlMs\) must be a whole number of seconds/,
    );
  });

  it('zookeeper auth: { username, password } is the digest scheme; the old list form gives the same credentials and warns once', () => {
    const current = resolveZookeeperOptions({
      type: 'zookeeper',
      url: 'h:2181',
      auth: { username: 'app', password: 's3cret' },
    });
    const list = [{ scheme: 'digest', credentials: 'app:s3cret' }];
    const old = resolveZookeeperOptions({ type: 'zookeeper', url: 'h:2181', auth: list });
    resolveZookeeperOptions({ type: 'zookeeper', url: 'h:2181', auth: list });
    const seen = (auth: typeof current.auth) =>
      auth.map(({ scheme, credentials }) => ({ scheme, credentials: credentials.toString('utf8') }));
    expect(seen(current.auth)).toEqual([{ scheme: 'digest', credentials: 'app:s3cret' }]);
    expect(seen(old.auth)).toEqual(seen(current.auth));
    expect(warningsWith('NDL_DEP_ZOOKEEPER_AUTH_LIST')).toHaveLength(1);
    expect(() =>
      resolveZookeeperOptions({ type: 'zookeeper', url: 'h:2181', auth: { username: 'a:b', password: 'x' } }),
    ).toThrow(InvalidLockArgumentError);
  });

  it('error messages name the current options', async () => {
    await expect(createLockBackend({ type: 'postgres' })).rejects.toThrow(/needs url \(a connection URL\) or client/);
    await expect(createLockBackend({ type: 'zookeeper' })).rejects.toThrow(/zookeeper url must look like/);
    await expect(createLockBackend({ type: 'etcd', urls: [] })).rejects.toThrow(
      /urls must be a URL or a non-empty array/,
    );
    await expect(
      createLockBackend({ type: 'etcd', urls: 'http://h:2379', connectionString: 'x' } as never),
    ).rejects.toThrow(
      /unknown option "connectionString" \(accepted: type, urls, leaseTtlMs, requestTimeoutMs, auth, credentials\)/,
    );
  });
});
