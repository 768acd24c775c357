import { describe, expect, it } from '@jest/globals';
import { AsyncResource } from 'node:async_hooks';
import { InvalidLockArgumentError, LockEngine, LockLostError, MemoryBackend, type LockEvent } from '../../lib/index.js';
import { ScriptedBackend } from '../support/scripted-backend.js';

describe('Lock handles, withLock and the engine lifecycle', () => {
  it("withLock returns the function's result, rethrows its error, and releases either way", async () => {
    const engine = new LockEngine(new MemoryBackend());
    await expect(engine.withLock('k', () => 42)).resolves.toBe(42);
    await expect(engine.withLock('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const again = await engine.tryAcquire('k');
    expect(again).not.toBeNull();
    await again!.release();
  });

  it('current() is the innermost lock of the call chain and undefined outside', async () => {
    const engine = new LockEngine(new MemoryBackend());
    expect(engine.current()).toBeUndefined();
    await engine.withLock('outer', async (outer) => {
      expect(engine.current()).toBe(outer);
      await engine.withLock('inner', async (inner) => expect(engine.current()).toBe(inner));
      expect(engine.current()).toBe(outer);
    });
    expect(engine.current()).toBeUndefined();
  });

  it('refuses to upgrade a read lock held by the same call chain (it would deadlock)', async () => {
    const engine = new LockEngine(new MemoryBackend());
    await engine.withLock(
      'k',
      async () => {
        await expect(engine.acquire('k', { mode: 'write' })).rejects.toBeInstanceOf(InvalidLockArgumentError);
      },
      { mode: 'read' },
    );
  });

  it('`await using` releases at the end of the block', async () => {
    const engine = new LockEngine(new MemoryBackend());
    let signal: AbortSignal;
    {
      await using lock = await engine.acquire('k');
      signal = lock.signal;
      expect(await engine.tryAcquire('k')).toBeNull();
    }
    expect(signal.aborted).toBe(true);
    expect(signal.reason).not.toBeInstanceOf(LockLostError);
    expect(await engine.tryAcquire('k')).not.toBeNull();
  });

  it('a re-entrant handle shares the fence and signal; only the outermost release frees the key', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const other = engine;
    await engine.withLock('k', async (outer) => {
      const inner = await engine.acquire('k');
      expect(inner.signal).toBe(outer.signal);
      await inner.release();
      await inner.release();
      expect(outer.signal.aborted).toBe(false);
    });
    expect(await other.tryAcquire('k')).not.toBeNull();
  });

  it("emits acquired with the time waited and released with the time held, with the caller's key", async () => {
    const engine = new LockEngine(new MemoryBackend(), { keyPrefix: 'app:' });
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const lock = await engine.acquire('orders:1');
    await lock.release();
    expect(events).toEqual([
      expect.objectContaining({ type: 'acquired', key: 'orders:1', waitedMs: expect.any(Number), mode: 'exclusive' }),
      expect.objectContaining({ type: 'released', key: 'orders:1', heldMs: expect.any(Number), fence: lock.fence }),
    ]);
  });

  it('prefixes keys in the store but never in what the caller sees', async () => {
    const backend = new ScriptedBackend();
    const engine = new LockEngine(backend, { keyPrefix: 'svc:' });
    const lock = await engine.acquire('a');
    expect(backend.requests[0].key).toBe('svc:a');
    expect(lock.key).toBe('a');
    await lock.release();
  });

  it('close() releases held locks first, then closes the backend once, and completes the events', async () => {
    const backend = new ScriptedBackend();
    const engine = new LockEngine(backend);
    let completed = false;
    engine.events.subscribe({ complete: () => (completed = true) });
    const lock = await engine.acquire('k');
    await Promise.all([engine.close(), engine.close()]);
    expect(lock.signal.aborted).toBe(true);
    expect(backend.calls.release).toBe(1);
    expect(backend.calls.close).toBe(1);
    expect(completed).toBe(true);
  });

  it('rejects bad engine options with InvalidLockArgumentError', () => {
    const backend = new MemoryBackend();
    expect(() => new LockEngine(backend, { leaseMs: 0 })).toThrow(InvalidLockArgumentError);
    expect(() => new LockEngine(backend, { waitMs: -1 })).toThrow(InvalidLockArgumentError);
    expect(() => new LockEngine(backend, { keyPrefix: 5 as never })).toThrow(InvalidLockArgumentError);
  });
});

describe('the lock of a call chain: current(), run() and waiting for oneself', () => {
  it('current() never returns a released lock, even to code of the scope that runs after the release', async () => {
    const engine = new LockEngine(new MemoryBackend());
    let probe: () => unknown = () => 'unset';
    await engine.withLock('outer', async () => {
      await engine.withLock('inner', () => {
        probe = AsyncResource.bind(() => engine.current()?.key);
      });
      expect(probe()).toBe('outer');
    });
    expect(probe()).toBeUndefined();
    await engine.close();
  });

  it('run(lock, fn) makes a lock from acquire() current and re-entrant inside fn, without releasing it', async () => {
    const engine = new LockEngine(new MemoryBackend(), { waitMs: 100 });
    await using lock = await engine.acquire('report');
    const nested = await engine.run(lock, () =>
      engine.withLock('report', (inner) => [engine.current() === inner, inner.fence]),
    );
    expect(nested).toEqual([true, lock.fence]);
    expect(lock.signal.aborted).toBe(false);
    expect(await engine.tryAcquire('report')).toBeNull();
    await engine.close();
  });

  it('run() refuses a lock of another lock service', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const other = new LockEngine(new MemoryBackend());
    const lock = await other.acquire('k');
    expect(() => engine.run(lock, () => undefined)).toThrow(InvalidLockArgumentError);
    await Promise.all([engine.close(), other.close()]);
  });

  it('a nested call on a key its own chain holds from acquire() is told about (self-wait), then times out', async () => {
    const engine = new LockEngine(new MemoryBackend(), { waitMs: 1_300 });
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const lock = await engine.acquire('report');
    await expect(engine.withLock('report', () => undefined)).rejects.toThrow(/busy/);
    expect(events.map((event) => event.type)).toEqual(['acquired', 'self-wait', 'timeout']);
    expect(events[1]).toMatchObject({ key: 'report', store: 'default', backend: 'memory' });
    await lock.release();
    await engine.close();
  });

  it('another call chain waiting briefly for the same key is not a self-wait', async () => {
    const engine = new LockEngine(new MemoryBackend(), { waitMs: 5_000 });
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const holder = await engine.acquire('k');
    const waiter = engine.withLock('k', () => 'got it');
    setTimeout(() => void holder.release(), 20);
    await expect(waiter).resolves.toBe('got it');
    expect(events.some((event) => event.type === 'self-wait')).toBe(false);
    await engine.close();
  });
});
