import { afterEach, describe, expect, it } from '@jest/globals';
import {
  fenceOf,
  isMultiLock,
  InvalidLockArgumentError,
  LockEngine,
  LockLostError,
  MemoryBackend,
} from '../../lib/index.js';
import type { AttemptResult, ClaimRequest, LockBackend, LockClaim } from '../../lib/backend.js';

/** A memory store that hands out no fences, as Redlock or a custom backend without them. */
class FencelessBackend implements LockBackend {
  readonly name = 'fenceless';
  private readonly store = new MemoryBackend();
  claim(request: ClaimRequest): LockClaim {
    const inner = this.store.claim(request);
    return {
      ...inner,
      tryAcquire: async (): Promise<AttemptResult> => {
        const result = await inner.tryAcquire();
        return result.acquired ? { ...result, fence: undefined } : result;
      },
      waitForChange: (maxMs, signal) => inner.waitForChange(maxMs, signal),
      renew: (leaseMs) => inner.renew(leaseMs),
      release: () => inner.release(),
    };
  }
  close = () => this.store.close();
}

describe('fenceOf: the fence a guarded write carries', () => {
  const engines: LockEngine[] = [];
  const engine = (backend: LockBackend = new MemoryBackend()) => {
    const created = new LockEngine(backend);
    engines.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });

  it('takes a whole number as it is, 0 included, up to MAX_SAFE_INTEGER', () => {
    expect(fenceOf(0)).toBe(0);
    expect(fenceOf(1_764_000_000_000_123)).toBe(1_764_000_000_000_123);
    expect(fenceOf(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([-1, 1.5, Number.NaN, Infinity, Number.MAX_SAFE_INTEGER + 1, '12', null])(
    'refuses %p with InvalidLockArgumentError',
    (bad) => {
      expect(() => fenceOf(bad as number)).toThrow(InvalidLockArgumentError);
    },
  );

  it('refuses an undefined fence (lock.fence of a store without fences) and says why', () => {
    expect(() => fenceOf(undefined as unknown as number)).toThrow(/cannot hand out honest fencing tokens/);
  });

  it("takes the fence of a held memory-backend lock, and a later holder's is larger", async () => {
    const locks = engine();
    const first = await locks.acquire('stock:1');
    expect(fenceOf(first)).toBe(first.fence);
    await first.release();
    const second = await locks.acquire('stock:1');
    expect(fenceOf(second)).toBeGreaterThan(first.fence!);
    await second.release();
  });

  it('refuses a lock whose signal has aborted (released or lost) with LockLostError naming the key', async () => {
    const lock = await engine().acquire('stock:2');
    await lock.release();
    expect(lock.signal.aborted).toBe(true);
    let error: unknown;
    try {
      fenceOf(lock);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).key).toBe('stock:2');
    expect((error as Error).message).toMatch(/no longer held/);
  });

  it('refuses a lock from a store without fences with InvalidLockArgumentError saying why', async () => {
    const lock = await engine(new FencelessBackend()).acquire('stock:3');
    expect(lock.fence).toBeUndefined();
    expect(() => fenceOf(lock)).toThrow(InvalidLockArgumentError);
    expect(() => fenceOf(lock)).toThrow(/Lock "stock:3" has no fence: its store cannot hand out honest fencing tokens/);
    await lock.release();
  });

  it('refuses a lock on several keys (no single fence) and points at its `fences`', async () => {
    const lock = await engine().acquire(['a', 'b']);
    if (!isMultiLock(lock)) throw new Error('expected a multi-lock');
    expect(() => fenceOf(lock)).toThrow(/lock\.fences\[key\]/);
    expect(fenceOf(lock.fences.a!)).toBe(lock.fences.a);
    await lock.release();
  });
});
