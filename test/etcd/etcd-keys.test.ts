import { describe, expect, it } from '@jest/globals';
import { escapeSegment, LockKeys, prefixEnd } from '../../lib/backends/etcd/etcd-keys.js';
import { createLockBackend, InvalidLockArgumentError } from '../../lib/index.js';

const utf8 = (value: string) => Buffer.from(value, 'utf8');

describe('etcd key layout', () => {
  it('escapes %, / and lone surrogates, and nothing else', () => {
    expect(escapeSegment('orders:42 ü 😀')).toBe('orders:42 ü 😀');
    expect(escapeSegment('a/b%c')).toBe('a%2Fb%25c');
    expect(escapeSegment('x\uD800y\uDC00z')).toBe('x%uD800y%uDC00z');
    expect(escapeSegment('\uDBFF\uD83D\uDE00')).toBe('%uDBFF\uD83D\uDE00');
  });

  it('keeps different keys different in etcd, byte for byte (no two keys collide)', () => {
    const keys = [
      'a',
      'a/',
      'a%2F',
      'a/write/x',
      'a%',
      '%',
      '/',
      'x\uD800',
      'x\uDBFF',
      'x\uFFFD',
      'x%uD800',
      'a/b',
      'a%2Fb',
    ];
    const encoded = keys.map((key) => utf8(escapeSegment(key)).toString('hex'));
    expect(new Set(encoded).size).toBe(keys.length);
  });

  it("never puts one lock's keys under another lock's prefix", () => {
    const keys = ['a', 'a/b', 'a/write', 'a/write/owner', 'ab', 'a%2F'];
    for (const outer of keys) {
      for (const inner of keys) {
        if (outer === inner) continue;
        const claim = new LockKeys(inner).claimKey('write', 'owner/with/slashes');
        expect(claim.subarray(0, new LockKeys(outer).prefix.length).equals(new LockKeys(outer).prefix)).toBe(false);
      }
    }
  });

  it('files exclusive and write claims under write/, read claims under read/', () => {
    const keys = new LockKeys('k');
    expect(keys.claimKey('exclusive', 'o').toString()).toBe('k/write/o');
    expect(keys.claimKey('write', 'o').toString()).toBe('k/write/o');
    expect(keys.claimKey('read', 'o/1').toString()).toBe('k/read/o%2F1');
    expect(keys.writePrefix.toString()).toBe('k/write/');
  });

  it('computes the end of a prefix range', () => {
    expect(prefixEnd(utf8('a/')).toString()).toBe('a0');
    expect([...prefixEnd(Buffer.from([0x61, 0xff, 0xff]))]).toEqual([0x62]);
    expect([...prefixEnd(Buffer.from([0xff]))]).toEqual([0]);
  });
});

describe('etcd backend options', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['no hosts', {}],
    ['empty url list', { urls: [] }],
    ['url without scheme', { urls: '127.0.0.1:2379' }],
    ['non-string url', { urls: [2379] }],
    ['http and https mixed', { urls: ['http://127.0.0.1:2379', 'https://127.0.0.1:2380'] }],
    ['fractional TTL', { urls: 'http://127.0.0.1:2379', leaseTtlMs: 1_500.5 }],
    ['TTL under a second', { urls: 'http://127.0.0.1:2379', leaseTtlMs: 999 }],
    ['zero TTL', { urls: 'http://127.0.0.1:2379', leaseTtlMs: 0 }],
    ['TTL as a string', { urls: 'http://127.0.0.1:2379', leaseTtlMs: '10000' }],
    ['negative request timeout', { urls: 'http://127.0.0.1:2379', requestTimeoutMs: -1 }],
    ['infinite request timeout', { urls: 'http://127.0.0.1:2379', requestTimeoutMs: Number.POSITIVE_INFINITY }],
  ];
  it.each(bad)('%s → InvalidLockArgumentError', async (_name, options) => {
    await expect(createLockBackend({ type: 'etcd', ...options })).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('accepts one URL or several, and creates no connection until used', async () => {
    const backend = await createLockBackend({
      type: 'etcd',
      urls: ['http://127.0.0.1:1', 'http://etcd.example:2379'],
      leaseTtlMs: 5_000,
    });
    expect(backend.name).toBe('etcd');
    await backend.close();
  });
});
