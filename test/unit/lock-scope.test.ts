import { describe, expect, it } from '@jest/globals';
import { LockEngine, MemoryBackend } from '../../lib/index.js';
import { openScopeCount } from '../../lib/engine/lock-scope.js';

/** A callback that runs later in the async context it was scheduled from. */
function later<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => setImmediate(() => resolve(fn())));
}

describe('async-context scopes last while their handle is held', () => {
  it('closes the scope of withLock when it returns or throws, nested and re-entrant ones too', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const seen: number[] = [];
    await engine.withLock('a', async (outer) => {
      seen.push(openScopeCount());
      await engine.withLock('a', async (inner) => {
        seen.push(openScopeCount());
        expect(inner.fence).toBe(outer.fence);
      });
      seen.push(openScopeCount());
      await engine.withLock('b', () => seen.push(openScopeCount()));
    });
    seen.push(openScopeCount());
    await expect(
      engine.withLock('a', () => {
        seen.push(openScopeCount());
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    seen.push(openScopeCount());
    expect(seen).toEqual([1, 2, 1, 2, 0, 1, 0]);
    await engine.close();
  });

  it('keeps a scope entered with run() until the lock is released, however often it was entered', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const lock = await engine.acquire('k');
    engine.run(lock, () => undefined);
    await Promise.all([engine.run(lock, async () => undefined), engine.run(lock, async () => undefined)]);
    expect(openScopeCount()).toBe(3);
    // Work scheduled inside the scope that runs after run() returned is still in it while the lock is held.
    const scheduled = engine.run(lock, () => later(() => engine.current()));
    expect(await scheduled).toBe(lock);
    await lock.release();
    expect(openScopeCount()).toBe(0);
    // A released handle opens no scope that nothing would close.
    engine.run(lock, () => undefined);
    expect(openScopeCount()).toBe(0);
    await engine.close();
  });

  it('closes the scope of a lock on several keys with its release', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const seen: number[] = [];
    await engine.withLock(['x', 'y'], async () => {
      seen.push(openScopeCount());
      await engine.withLock('y', () => seen.push(openScopeCount()), { waitMs: 0 });
    });
    seen.push(openScopeCount());
    expect(seen).toEqual([1, 2, 0]);
    await engine.close();
  });

  it('closes the scope of a lock released after it was lost', async () => {
    const backend = new MemoryBackend();
    const engine = new LockEngine(backend, { leaseMs: 300 });
    await engine.withLock('lost', async (lock) => {
      backend.expire('lock:lost');
      await new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve()));
      expect(openScopeCount()).toBe(1);
    });
    expect(openScopeCount()).toBe(0);
    await engine.close();
  });

  it('passes over the frames of released locks that work scheduled inside them still carries', async () => {
    const engine = new LockEngine(new MemoryBackend());
    let stale!: Promise<unknown>;
    let gate!: () => void;
    const opened = new Promise<void>((resolve) => (gate = resolve));
    await engine.withLock('first', () => {
      stale = opened.then(() => [engine.current()?.key, openScopeCount()]);
    });
    // Another scope is open while the stale work runs: its frames are visible again, and passed over.
    await engine.withLock('second', async () => {
      gate();
      expect(await stale).toEqual([undefined, 1]);
      expect(engine.current()?.key).toBe('second');
    });
    // And re-entrancy does not come from a released frame: the key is taken anew.
    const again = engine.withLock('first', () => 'taken', { waitMs: 0 });
    await expect(again).resolves.toBe('taken');
    await engine.close();
  });
});
