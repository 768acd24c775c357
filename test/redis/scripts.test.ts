import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockEngine, LockTimeoutError } from '../../lib/index.js';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { WAITING_FLAG_MARGIN_MS } from '../../lib/backends/redis/waiting-flag.js';
import { RedisServer } from '../harness/redis-server.js';

/** Calls of each command so far, from INFO commandstats. */
function commandCalls(server: RedisServer): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const line of server.cli('INFO', 'commandstats').split('\n')) {
    const match = /^cmdstat_(\w+):calls=(\d+)/.exec(line.trim());
    if (match) calls[match[1]] = Number(match[2]);
  }
  return calls;
}

describe('redis backend scripts', () => {
  let server: RedisServer;
  let engine: LockEngine;

  beforeAll(async () => {
    server = await RedisServer.start();
    engine = new LockEngine(await createLockBackend({ type: 'redis', url: server.url }), { waitMs: 0 });
  }, 30_000);

  afterAll(async () => {
    await engine?.close();
    await server?.stop();
  });

  it('runs by EVALSHA, falls back to EVAL once after SCRIPT FLUSH, then uses EVALSHA again', async () => {
    await (await engine.acquire('flush')).release(); // the scripts are cached now
    server.cli('CONFIG', 'RESETSTAT');
    await (await engine.acquire('flush')).release();
    expect(commandCalls(server)).toMatchObject({ evalsha: 2 });
    expect(commandCalls(server).eval).toBeUndefined();

    expect(server.cli('SCRIPT', 'FLUSH')).toBe('OK');
    server.cli('CONFIG', 'RESETSTAT');
    const lock = await engine.acquire('flush');
    await lock.extend(10_000);
    await lock.release();
    // acquire, renew and release: each tried by SHA (NOSCRIPT), then sent once in full.
    const afterFlush = commandCalls(server);
    expect(afterFlush.eval).toBe(3);
    expect(afterFlush.evalsha).toBe(3);
    expect(lock.fence).toBeGreaterThan(0);

    server.cli('CONFIG', 'RESETSTAT');
    await (await engine.acquire('flush')).release();
    expect(commandCalls(server)).toMatchObject({ evalsha: 2 });
    expect(commandCalls(server).eval).toBeUndefined();
  });

  it('keeps the fence counter for the lease plus the idle time (a day by default) while the lock key carries the lease, and for the idle time after the release', async () => {
    const lock = await engine.acquire('ttl', { leaseMs: 10_000 });
    const lockTtl = Number(server.cli('PTTL', '{lock:ttl}'));
    expect(lockTtl).toBeGreaterThan(8_000);
    expect(lockTtl).toBeLessThanOrEqual(10_000);
    expect(server.cli('GET', '{lock:ttl}')).toMatch(/:/); // the owner id
    const heldTtl = Number(server.cli('PTTL', '{lock:ttl}:fence'));
    expect(heldTtl).toBeGreaterThan(86_400_000 + 8_000);
    expect(heldTtl).toBeLessThanOrEqual(86_400_000 + 10_000 + 1);
    await lock.release();
    expect(server.cli('EXISTS', '{lock:ttl}')).toBe('0');
    // Released within its lease (a hundredth of the idle time at most): the counter keeps the TTL it got, which outlives the release by the idle time and at most the lease's unspent part.
    const fenceTtl = Number(server.cli('PTTL', '{lock:ttl}:fence'));
    expect(fenceTtl).toBeGreaterThan(86_400_000);
    expect(fenceTtl).toBeLessThanOrEqual(86_400_000 + 10_000 + 1);
    expect(Number(server.cli('GET', '{lock:ttl}:fence'))).toBe(lock.fence);
  });

  it('takes a free key with EXISTS, SET, TIME and SET of the counter, and frees it, when nobody waited, with GET and DEL alone', async () => {
    server.cli('CONFIG', 'RESETSTAT');
    const lock = await engine.acquire('alone', { leaseMs: 10_000 });
    expect(commandCalls(server)).toEqual({ evalsha: 1, exists: 1, set: 2, time: 1 });
    server.cli('CONFIG', 'RESETSTAT');
    await lock.release();
    expect(commandCalls(server)).toEqual({ evalsha: 1, get: 1, del: 1 });
  });

  it("announces a release when a refused claim flagged the key as waited for, until the holder's lease ends and a margin more", async () => {
    const lock = await engine.acquire('waited', { leaseMs: 10_000 });
    expect(await engine.tryAcquire('waited')).toBeNull();
    const flagTtl = Number(server.cli('PTTL', '{lock:waited}:waiting'));
    expect(flagTtl).toBeGreaterThan(8_000 + WAITING_FLAG_MARGIN_MS);
    expect(flagTtl).toBeLessThanOrEqual(10_000 + WAITING_FLAG_MARGIN_MS);
    server.cli('CONFIG', 'RESETSTAT');
    await lock.release();
    // One DEL drops the lock and the flag, and says the flag was there.
    expect(commandCalls(server)).toEqual({ evalsha: 1, get: 1, del: 1, publish: 1 });
    expect(server.cli('EXISTS', '{lock:waited}:waiting')).toBe('0');
    server.cli('CONFIG', 'RESETSTAT');
    await (await engine.acquire('waited')).release();
    expect(commandCalls(server).publish).toBeUndefined();
  });

  it('frees a key released within its lease without touching its counter; once the lease the counter was kept for is spent, the release sets the counter to expire the idle time later', async () => {
    const early = await engine.acquire('release-early', { leaseMs: 10_000 });
    server.cli('CONFIG', 'RESETSTAT');
    await early.release();
    const calls = commandCalls(server);
    expect(calls).toMatchObject({ evalsha: 1, get: 1, del: 1 });
    expect(calls.pexpire).toBeUndefined();

    const late = await engine.acquire('release-late', { leaseMs: 300 });
    // Renewed every lease/3; after four renewals more than the 300 ms lease the counter's TTL was set for has passed.
    const renewals = firstValueFrom(
      engine.events.pipe(
        filter((event) => event.type === 'extended' && event.key === 'release-late'),
        take(4),
        toArray(),
      ),
    );
    await renewals;
    server.cli('CONFIG', 'RESETSTAT');
    await late.release();
    expect(commandCalls(server)).toMatchObject({ evalsha: 1, get: 1, del: 1, pexpire: 1 });
    const fenceTtl = Number(server.cli('PTTL', '{lock:release-late}:fence'));
    expect(fenceTtl).toBeGreaterThan(86_400_000 - 2_000);
    expect(fenceTtl).toBeLessThanOrEqual(86_400_000);
  });

  it('renews a lock held for less than half the idle time with GET and PEXPIRE of the lock key alone, not its fence counter', async () => {
    const lock = await engine.acquire('renew-only', { leaseMs: 10_000 });
    server.cli('CONFIG', 'RESETSTAT');
    await lock.extend(20_000);
    const calls = commandCalls(server);
    expect(calls).toMatchObject({ evalsha: 1, get: 1, pexpire: 1 });
    expect(calls.pttl).toBeUndefined();
    expect(Number(server.cli('PTTL', '{lock:renew-only}'))).toBeGreaterThan(18_000);
    await lock.release();
  });

  it("reports the holder's remaining lease to a busy caller (LockTimeoutError.retryAfterMs)", async () => {
    const lock = await engine.acquire('busy', { leaseMs: 10_000 });
    const error = (await engine.acquire('busy', { waitMs: 0 }).catch((e: unknown) => e)) as LockTimeoutError;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error.retryAfterMs).toBeGreaterThan(8_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(10_000);
    await lock.release();
  });
});
