import { describe, expect, it } from '@jest/globals';
import { inspect } from 'node:util';
import { createLockBackend, InvalidLockArgumentError } from '../../lib/index.js';
import { driverAcl } from '../../lib/backends/zookeeper/zk-acl.js';
import { loadZookeeperDriver } from '../../lib/backends/zookeeper/zk-driver.js';
import { resolveZookeeperOptions } from '../../lib/backends/zookeeper/zookeeper-options.js';

const SECRET = 'top-secret-password';
const auth = [{ scheme: 'digest', credentials: `app:${SECRET}` }];
const digestId = 'app:F6Y+U5gIoCbNNoLQExmvxRFeatA=';
const resolve = (extra: Record<string, unknown>) =>
  resolveZookeeperOptions({ type: 'zookeeper', url: '127.0.0.1:2181', ...extra });

/** The error `resolve(extra)` throws; fails the test if it throws none. */
function refusal(extra: Record<string, unknown>): InvalidLockArgumentError {
  try {
    resolve(extra);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    return error as InvalidLockArgumentError;
  }
  throw new Error(`accepted ${JSON.stringify(Object.keys(extra))}`);
}

describe('zookeeper auth and acl options (no server)', () => {
  it("defaults to no auth and the open ACL (today's behaviour)", () => {
    expect(resolve({})).toMatchObject({ auth: [], acl: 'open' });
    expect(resolve({ acl: 'open' }).acl).toBe('open');
  });

  it('accepts digest auth with the creator ACL, and a custom list', () => {
    expect(resolve({ auth, acl: 'creator' })).toMatchObject({ auth: [{ scheme: 'digest' }], acl: 'creator' });
    const acl = [
      { scheme: 'digest', id: digestId, permissions: ['read', 'create', 'delete'] },
      { scheme: 'ip', id: '10.0.0.0/8', permissions: ['all'] },
    ];
    expect(resolve({ acl }).acl).toEqual(acl);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      "'creator' without auth",
      { acl: 'creator' },
      /acl 'creator' grants the session's authenticated ids, so it needs the auth option/,
    ],
    ["'creator' with an empty auth list", { acl: 'creator', auth: [] }, /needs the auth option/],
    [
      'an acl that is neither a keyword nor a list',
      { acl: 'closed' },
      /acl must be 'open', 'creator' or a non-empty array .*got "closed"/,
    ],
    ['an empty acl list', { acl: [] }, /acl must be 'open', 'creator' or a non-empty array/],
    [
      'an acl entry that is not an object',
      { acl: ['world:anyone'] },
      /acl\[0\] must be \{ scheme, id, permissions \}, got a string/,
    ],
    [
      'an empty acl scheme',
      { acl: [{ scheme: '', id: 'x', permissions: ['all'] }] },
      /acl\[0\]\.scheme must be a non-empty scheme name/,
    ],
    [
      'an acl scheme with a space',
      { acl: [{ scheme: 'dig est', id: 'x', permissions: ['all'] }] },
      /acl\[0\]\.scheme must be a non-empty scheme name/,
    ],
    [
      'an unknown permission',
      { acl: [{ scheme: 'world', id: 'anyone', permissions: ['all', 'execute'] }] },
      /acl\[0\]\.permissions: unknown permission "execute"; expected read, write, create, delete, admin, all/,
    ],
    [
      'no permissions',
      { acl: [{ scheme: 'world', id: 'anyone', permissions: [] }] },
      /acl\[0\]\.permissions must be a non-empty array/,
    ],
    [
      'a world id other than anyone',
      { acl: [{ scheme: 'world', id: 'everybody', permissions: ['all'] }] },
      /world scheme has the one id 'anyone'/,
    ],
    [
      "an 'auth' entry without auth",
      { acl: [{ scheme: 'auth', id: '', permissions: ['all'] }] },
      /acl\[0\] \(scheme 'auth'\) grants the session's authenticated ids/,
    ],
    ['a missing id', { acl: [{ scheme: 'ip', permissions: ['all'] }] }, /acl\[0\]\.id must be a string, got undefined/],
    ['an empty ip id', { acl: [{ scheme: 'ip', id: '', permissions: ['all'] }] }, /acl\[0\]\.id must not be empty/],
    [
      'a list that lets nobody queue',
      { acl: [{ scheme: 'world', id: 'anyone', permissions: ['read', 'write'] }] },
      /grants nobody create, delete: the backend needs read, create and delete/,
    ],
    [
      'auth that is neither { username, password } nor a list',
      { auth: { scheme: 'digest', credentials: 'app:x' } },
      /auth must be \{ username, password \}/,
    ],
    [
      'an empty auth scheme',
      { auth: [{ scheme: '', credentials: 'app:x' }] },
      /auth\[0\]\.scheme must be a non-empty scheme name/,
    ],
    [
      'world as an auth scheme',
      { auth: [{ scheme: 'world', credentials: 'anyone' }] },
      /auth\[0\]\.scheme 'world' is an ACL scheme, not an authentication scheme/,
    ],
    [
      'empty credentials',
      { auth: [{ scheme: 'digest', credentials: '' }] },
      /auth\[0\]\.credentials must be a non-empty string, got a string/,
    ],
  ])('refuses %s', (_, extra, message) => {
    expect(refusal(extra).message).toMatch(message);
  });

  it('never quotes a credential or a digest id in its messages', () => {
    const cases: Record<string, unknown>[] = [
      { auth: `app:${SECRET}` },
      { auth: [`app:${SECRET}`] },
      { auth: [{ scheme: 'digest', credentials: SECRET }] },
      { auth: [{ scheme: 'digest', credentials: Buffer.from(SECRET) }] },
      { acl: [{ scheme: 'digest', id: `app:${SECRET}`, permissions: ['all'] }] },
    ];
    for (const extra of cases) {
      const { message } = refusal(extra);
      expect(message).not.toContain(SECRET);
      expect(message).toMatch(/auth|acl/);
    }
    expect(refusal(cases[2]).message).toMatch(
      /credentials must be 'user:password' for the digest scheme \(value not shown\)/,
    );
    expect(refusal(cases[4]).message).toMatch(
      /base64\(sha1\('user:password'\)\) for the digest scheme, not the password itself/,
    );
  });

  it('keeps resolved credentials out of JSON and inspect output, while the driver still gets them', () => {
    const [entry] = resolve({ auth }).auth;
    expect(entry.credentials.toString()).toBe(`app:${SECRET}`);
    expect(JSON.stringify(resolve({ auth }))).not.toContain(SECRET);
    expect(inspect(resolve({ auth }), { depth: 5 })).not.toContain(SECRET);
  });

  it("refuses 'creator' without auth when the backend is created, before connecting", async () => {
    await expect(createLockBackend({ type: 'zookeeper', url: '127.0.0.1:1', acl: 'creator' })).rejects.toThrow(
      InvalidLockArgumentError,
    );
  });

  it("builds the driver's ACL objects: permission names as bit masks, keywords as the driver's constants", async () => {
    const driver = await loadZookeeperDriver();
    expect(driverAcl(driver, 'open')).toBe(driver.ACL.OPEN_ACL_UNSAFE);
    expect(driverAcl(driver, 'creator')).toBe(driver.ACL.CREATOR_ALL_ACL);
    const built = driverAcl(driver, [
      { scheme: 'digest', id: digestId, permissions: ['read', 'create', 'delete'] },
      { scheme: 'world', id: 'anyone', permissions: ['read', 'all'] },
      { scheme: 'ip', id: '127.0.0.1', permissions: ['write', 'admin'] },
    ]);
    expect(built.map(({ permission, id }) => [permission, id.scheme, id.id])).toEqual([
      [1 | 4 | 8, 'digest', digestId],
      [31, 'world', 'anyone'],
      [2 | 16, 'ip', '127.0.0.1'],
    ]);
    for (const acl of built) expect(acl).toBeInstanceOf(driver.ACL);
  });
});
