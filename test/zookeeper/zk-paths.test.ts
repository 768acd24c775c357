import { describe, expect, it } from '@jest/globals';
import { createLockBackend, InvalidLockArgumentError } from '../../lib/index.js';
import { queuePosition } from '../../lib/backends/zookeeper/lock-queue.js';
import { keyNodeName, lockNodePrefix, parseLockNode } from '../../lib/backends/zookeeper/zk-paths.js';

/** What ZooKeeper's PathUtils.validatePath accepts in one node name. */
function isValidZnodeName(name: string): boolean {
  return (
    name.length > 0 &&
    !name.includes('/') &&
    name !== '.' &&
    name !== '..' &&
    // eslint-disable-next-line no-control-regex -- the control characters ZooKeeper refuses
    !/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(name)
  );
}

const node = (mode: 'read' | 'write', sequence: number) => `${mode}-0123abcd-${String(sequence).padStart(10, '0')}`;

describe('zookeeper key escaping', () => {
  const awkward = [
    'a/b',
    'a%2fb',
    'a%252fb',
    '.',
    '..',
    '/',
    '//',
    'x/../y',
    'päckchen',
    '日本',
    '🔒',
    '\ud800',
    '\u0000\u0001',
    'a b',
    '%u0041',
    'A',
  ];

  it('turns any key into one valid znode name', () => {
    for (const key of [...awkward, 'k'.repeat(65_536), '/'.repeat(65_536)]) {
      const name = keyNodeName(key);
      expect(isValidZnodeName(name)).toBe(true);
      expect(name.length).toBeLessThanOrEqual(300);
    }
  });

  it('never maps two different keys to the same name', () => {
    const keys = [...awkward, 'x'.repeat(5_000), `${'x'.repeat(4_999)}y`, `${'é'.repeat(100)}`, `${'é'.repeat(100)}!`];
    const names = keys.map(keyNodeName);
    expect(new Set(names).size).toBe(keys.length);
  });

  it('keeps short keys readable', () => {
    expect(keyNodeName('lock:orders:42')).toBe('k-lock:orders:42');
    expect(keyNodeName('a/b')).toBe('k-a%2fb');
  });
});

describe('zookeeper lock node names', () => {
  it('parses what it creates and ignores foreign children', () => {
    expect(parseLockNode(`${lockNodePrefix('read', 'ab12')}0000000007`)).toEqual({
      name: 'read-ab12-0000000007',
      shared: true,
      attemptId: 'ab12',
      sequence: 7,
    });
    expect(parseLockNode(`${lockNodePrefix('exclusive', 'ab12')}0000000008`)?.shared).toBe(false);
    expect(lockNodePrefix('write', 'ab12')).toBe(lockNodePrefix('exclusive', 'ab12'));
    expect(parseLockNode('something-else')).toBeUndefined();
  });
});

describe('zookeeper queue position', () => {
  it('gives an exclusive lock to the lowest node and makes every other wait for the one just before it', () => {
    const children = [node('write', 3), node('write', 1), node('read', 2)];
    expect(queuePosition(children, node('write', 1), false)).toEqual({ state: 'held' });
    expect(queuePosition(children, node('write', 3), false)).toEqual({ state: 'waiting', watch: node('read', 2) });
  });

  it('lets readers in with readers ahead, and makes them wait for the last writer ahead', () => {
    const children = [
      node('read', 1),
      node('read', 2),
      node('write', 3),
      node('read', 4),
      node('write', 5),
      node('read', 6),
    ];
    expect(queuePosition(children, node('read', 2), true)).toEqual({ state: 'held' });
    expect(queuePosition(children, node('write', 3), false)).toEqual({ state: 'waiting', watch: node('read', 2) });
    expect(queuePosition(children, node('read', 4), true)).toEqual({ state: 'waiting', watch: node('write', 3) });
    expect(queuePosition(children, node('read', 6), true)).toEqual({ state: 'waiting', watch: node('write', 5) });
  });

  it('orders by sequence number, not by name, and reports a node that is gone', () => {
    expect(queuePosition([node('write', 10), node('read', 9)], node('write', 10), false)).toEqual({
      state: 'waiting',
      watch: node('read', 9),
    });
    expect(queuePosition([node('write', 1)], node('write', 2), false)).toEqual({ state: 'missing' });
  });
});

describe('zookeeper backend options', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['no url', {}],
    ['empty url', { url: '' }],
    ['url with spaces', { url: 'a b:2181' }],
    ['relative rootPath', { url: 'h:2181', rootPath: 'locks' }],
    ['root as rootPath', { url: 'h:2181', rootPath: '/' }],
    ['rootPath with a trailing slash', { url: 'h:2181', rootPath: '/locks/' }],
    ['rootPath with ..', { url: 'h:2181', rootPath: '/a/../b' }],
    ['rootPath under /zookeeper', { url: 'h:2181', rootPath: '/zookeeper/x' }],
    ['zero sessionTimeoutMs', { url: 'h:2181', sessionTimeoutMs: 0 }],
    ['fractional connectTimeoutMs', { url: 'h:2181', connectTimeoutMs: 1.5 }],
  ];
  it.each(bad)('%s → InvalidLockArgumentError', async (_name, options) => {
    await expect(createLockBackend({ type: 'zookeeper', ...options } as never)).rejects.toBeInstanceOf(
      InvalidLockArgumentError,
    );
  });

  it('accepts an ensemble with a chroot', async () => {
    const backend = await createLockBackend({ type: 'zookeeper', url: 'h1:2181,h2:2181/apps/x', rootPath: '/locks' });
    await backend.close();
  });
});
