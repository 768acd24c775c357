import { afterEach, describe, expect, it, jest } from '@jest/globals';
import {
  InvalidLockArgumentError,
  isMultiLock,
  LockBackendError,
  LockEngine,
  LockLostError,
  LockTimeoutError,
  MemoryBackend,
  type Lock,
  type LockEvent,
  type MultiLock,
} from '../../lib/index.js';
import type { ClaimRequest, LockBackend } from '../../lib/backend.js';

/** A memory store shared by several engines, recording the order in which keys are claimed; keys in `failing` act as an unreachable store. */
class OrderedBackend implements LockBackend {
  readonly name = 'ordered';
  readonly store = new MemoryBackend();
  readonly capabilities = this.store.capabilities;
  readonly claimed: string[] = [];
  readonly failing = new Set<string>();

  claim(request: ClaimRequest) {
    this.claimed.push(request.key);
    const inner = this.store.claim(request);
    if (!this.failing.has(request.key)) return inner;
    return {
      tryAcquire: () => Promise.reject(new Error('connect ECONNREFUSED')),
      waitForChange: inner.waitForChange.bind(inner),
      renew: inner.renew.bind(inner),
      release: inner.release.bind(inner),
    };
  }

  async close(): Promise<void> {}
}

function setup(leaseMs = 10_000) {
  const backend = new OrderedBackend();
  const engine = new LockEngine(backend, { leaseMs, waitMs: 1_000 });
  const other = new LockEngine(backend, { leaseMs, waitMs: 1_000 });
  const events: LockEvent[] = [];
  engine.events.subscribe((event) => events.push(event));
  return { backend, engine, other, events };
}

/** Keys of `keys` that another holder can take right now (each is taken and given back). */
async function freeKeys(engine: LockEngine, keys: readonly string[]): Promise<string[]> {
  const free: string[] = [];
  for (const key of keys) {
    const lock = await engine.tryAcquire(key);
    if (lock) free.push(key);
    await lock?.release();
  }
  return free;
}

/** Resolves at the first event of `engine` that matches. */
function nextEvent(engine: LockEngine, match: (event: LockEvent) => boolean): Promise<LockEvent> {
  return new Promise((resolve) => {
    const subscription = engine.events.subscribe((event) => {
      if (!match(event)) return;
      subscription.unsubscribe();
      resolve(event);
    });
  });
}

function asMulti(lock: Lock | null | undefined): MultiLock {
  if (!isMultiLock(lock)) throw new Error('expected a MultiLock');
  return lock;
}

describe('multi-key locks (memory backend)', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('holds every key; one handle with the keys in canonical order, a fence per key and no single fence', async () => {
    const { engine, other } = setup();
    const lock = asMulti(await engine.acquire(['c', 'a', 'b']));
    expect(lock.keys).toEqual(['a', 'b', 'c']);
    expect(lock.key).toBe('a,b,c');
    expect(lock.fence).toBeUndefined();
    expect(Object.keys(lock.fences).sort()).toEqual(['a', 'b', 'c']);
    for (const fence of Object.values(lock.fences)) expect(typeof fence).toBe('number');
    expect(await freeKeys(other, ['a', 'b', 'c', 'd'])).toEqual(['d']);
    await lock.release();
    expect(await freeKeys(other, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('claims keys in sorted order whatever order the caller gives, so it waits for the lowest busy key holding nothing above it', async () => {
    const { backend, engine, other } = setup();
    const x = await other.acquire('x');
    backend.claimed.length = 0;
    const pending = engine.acquire(['y', 'x'], { waitMs: 5_000 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(backend.claimed).toEqual(['lock:x']);
    // Had it gone in the caller's order it would now hold y while waiting for x.
    expect(await freeKeys(other, ['y'])).toEqual(['y']);
    await x.release();
    const lock = asMulti(await pending);
    expect(lock.keys).toEqual(['x', 'y']);
    await lock.release();
  });

  it('takes a duplicated key once; a list with one distinct key gives a plain single lock', async () => {
    const { backend, engine, other } = setup();
    const single = await engine.acquire(['a', 'a']);
    expect(isMultiLock(single)).toBe(false);
    expect(single.key).toBe('a');
    expect(typeof single.fence).toBe('number');
    await single.release();
    backend.claimed.length = 0;
    const lock = asMulti(await engine.acquire(['b', 'a', 'b', 'a']));
    expect(backend.claimed).toEqual(['lock:a', 'lock:b']);
    expect(lock.keys).toEqual(['a', 'b']);
    await lock.release();
    expect(await freeKeys(other, ['a', 'b'])).toEqual(['a', 'b']);
  });

  it('all or none: one busy key times out after waitMs, naming that key, and the keys taken before it are released', async () => {
    const { engine, other, events } = setup();
    const b = await other.acquire('b');
    const error = await engine.acquire(['c', 'b', 'a'], { waitMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).key).toBe('b');
    expect((error as LockTimeoutError).waitMs).toBe(50);
    // 'a' was really taken first, then given back; 'c' was never reached.
    expect(events.map((event) => `${event.type}:${event.key}`)).toEqual(['acquired:a', 'timeout:b', 'released:a']);
    expect(await freeKeys(other, ['a', 'c'])).toEqual(['a', 'c']);
    await b.release();
  });

  it('tryAcquire of a list: null when any key is busy, holding none of them', async () => {
    const { engine, other } = setup();
    const c = await other.acquire('c');
    expect(await engine.tryAcquire(['a', 'b', 'c'])).toBeNull();
    expect(await freeKeys(other, ['a', 'b'])).toEqual(['a', 'b']);
    await c.release();
    const lock = await engine.tryAcquire(['a', 'b', 'c']);
    expect(asMulti(lock).keys).toEqual(['a', 'b', 'c']);
    await lock!.release();
  });

  it('one deadline for the whole list: time spent waiting for one key comes off the wait for the next', async () => {
    jest.useFakeTimers();
    const { engine, other } = setup();
    const a = await other.acquire('a');
    const b = await other.acquire('b');
    let settled: unknown;
    engine.acquire(['a', 'b'], { waitMs: 300 }).then(
      (lock) => (settled = lock),
      (error: unknown) => (settled = error),
    );
    await jest.advanceTimersByTimeAsync(200);
    await a.release();
    await jest.advanceTimersByTimeAsync(99);
    expect(settled).toBeUndefined();
    // 300 ms after the call, not 300 ms after 'a' was taken.
    await jest.advanceTimersByTimeAsync(2);
    expect(settled).toBeInstanceOf(LockTimeoutError);
    expect((settled as LockTimeoutError).key).toBe('b');
    expect(await freeKeys(other, ['a'])).toEqual(['a']);
    await b.release();
  });

  it('a store failure on one key rejects LockBackendError with the keys already taken released', async () => {
    const { backend, engine, other } = setup();
    backend.failing.add('lock:b');
    const error = await engine.acquire(['a', 'b', 'c']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockBackendError);
    backend.failing.clear();
    expect(await freeKeys(other, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('aborting the signal stops the wait and releases the keys already taken', async () => {
    const { engine, other } = setup();
    const b = await other.acquire('b');
    const controller = new AbortController();
    const tookA = nextEvent(engine, (event) => event.type === 'acquired' && event.key === 'a');
    const pending = engine.acquire(['a', 'b'], { waitMs: Infinity, signal: controller.signal });
    await tookA;
    controller.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    expect(await freeKeys(other, ['a'])).toEqual(['a']);
    await b.release();
  });

  it('is re-entrant inside withLock: current() is the multi handle, nested locks on its keys share their fences', async () => {
    const { engine, other } = setup();
    await engine.withLock(['b', 'a'], async (multi) => {
      expect(engine.current()).toBe(multi);
      const fences = asMulti(multi).fences;
      const inner = await engine.acquire('a', { waitMs: 0 });
      expect(inner.fence).toBe(fences.a);
      await inner.release();
      expect(await freeKeys(other, ['a', 'b'])).toEqual([]);
      // Part re-entered (b), part new (c).
      await engine.withLock(
        ['c', 'b'],
        async (nested) => {
          expect(engine.current()).toBe(nested);
          expect(asMulti(nested).fences.b).toBe(fences.b);
          expect(asMulti(nested).fences.c).toEqual(expect.any(Number));
        },
        { waitMs: 0 },
      );
      expect(await freeKeys(other, ['a', 'b', 'c'])).toEqual(['c']);
      await engine.withLock('a', async (single) => expect(engine.current()).toBe(single), { waitMs: 0 });
      expect(engine.current()).toBe(multi);
    });
    expect(await freeKeys(other, ['a', 'b'])).toEqual(['a', 'b']);
  });

  it("signal aborts with the part's LockLostError when one part is lost; release frees the others, then rejects that error", async () => {
    // 600 ms, not 90: on a loaded machine a stalled event loop lapsed part a locally before b's loss was seen (a renewal every 200 ms finds it).
    const { backend, engine, other } = setup(600);
    const lock = asMulti(await engine.acquire(['a', 'b']));
    const signal = lock.signal;
    backend.store.expire('lock:b');
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).key).toBe('b');
    const error = await lock.release().catch((e: unknown) => e);
    expect(error).toBe(signal.reason);
    expect(await freeKeys(other, ['a', 'b'])).toEqual(['a', 'b']);
  });

  it('a signal first asked for after a part was lost is already aborted with that loss', async () => {
    const { backend, engine } = setup(600);
    const lock = await engine.acquire(['a', 'b']);
    const lost = nextEvent(engine, (event) => event.type === 'lost');
    backend.store.expire('lock:a');
    await lost;
    expect(lock.signal.aborted).toBe(true);
    expect((lock.signal.reason as LockLostError).key).toBe('a');
    await lock[Symbol.asyncDispose]();
  });

  it('release frees every part, last taken first, once; the signal then aborts with a non-loss reason', async () => {
    const { engine, other, events } = setup();
    const lock = await engine.acquire(['a', 'b', 'c']);
    const signal = lock.signal;
    await lock.release();
    await lock.release();
    expect(events.filter((event) => event.type === 'released').map((event) => event.key)).toEqual(['c', 'b', 'a']);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).not.toBeInstanceOf(LockLostError);
    expect(await freeKeys(other, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
  });

  it("extend renews every part; expiresAt is the earliest part's", async () => {
    const { engine } = setup(1_000);
    const lock = await engine.acquire(['a', 'b'], { leaseMs: 1_000 });
    expect(lock.expiresAt).toBeLessThanOrEqual(Date.now() + 1_000);
    await lock.extend(60_000);
    expect(lock.expiresAt).toBeGreaterThan(Date.now() + 50_000);
    await lock.release();
  });

  it('a part lost while a later key was awaited is not handed out: the whole list is taken again', async () => {
    const { backend, engine, other, events } = setup(60);
    const b = await other.acquire('b', { leaseMs: 10_000 });
    const tookA = nextEvent(engine, (event) => event.type === 'acquired' && event.key === 'a');
    const pending = engine.acquire(['a', 'b'], { waitMs: 5_000 });
    const firstFence = ((await tookA) as Extract<LockEvent, { type: 'acquired' }>).fence!;
    const lostA = nextEvent(engine, (event) => event.type === 'lost' && event.key === 'a');
    backend.store.expire('lock:a');
    await lostA;
    await b.release();
    const lock = asMulti(await pending);
    expect(lock.fences.a).toBeGreaterThan(firstFence);
    expect(lock.signal.aborted).toBe(false);
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['a', 'b', 'a', 'b']);
    await lock.release();
  });

  it('applies mode to every part: two read multi-locks share their keys, a writer on one key waits', async () => {
    const { engine, other } = setup();
    const r1 = await engine.acquire(['a', 'b'], { mode: 'read' });
    const r2 = await other.acquire(['b', 'a'], { mode: 'read' });
    expect(await other.tryAcquire('a', { mode: 'write' })).toBeNull();
    await r1.release();
    await r2.release();
    expect(await freeKeys(other, ['a', 'b'])).toEqual(['a', 'b']);
  });

  it.each([
    ['an empty list', [], /must not be empty/],
    ['a non-string element', ['a', 42], /element 1: Lock key must be a string, got 42/],
    ['an empty element', ['a', ''], /element 1: Lock key must not be empty/],
    ['a null element', [null, 'a'], /element 0: Lock key must be a string, got null/],
  ])('rejects %s with InvalidLockArgumentError before taking anything', async (_name, keys, message) => {
    const { engine, events } = setup();
    for (const call of [
      () => engine.acquire(keys as string[]),
      () => engine.tryAcquire(keys as string[]),
      () => engine.withLock(keys as string[], () => 1),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockArgumentError);
      expect((error as Error).message).toMatch(message);
    }
    expect(events).toEqual([]);
  });

  it('refuses permits with a key list (a semaphore on several keys), even with one distinct key', async () => {
    const { engine, events } = setup();
    await expect(engine.acquire(['a', 'b'], { permits: 2 })).rejects.toThrow(/cannot span several keys/);
    await expect(engine.acquire(['a'], { permits: 2 })).rejects.toBeInstanceOf(InvalidLockArgumentError);
    expect(events).toEqual([]);
  });
});
