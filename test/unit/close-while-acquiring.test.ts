import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { LockBackendError, LockEngine, LockShuttingDownError } from '../../lib/index.js';
import { CLOSE_TIMEOUT_MS, RELEASE_TIMEOUT_MS } from '../../lib/engine/answer-deadlines.js';
import type { AttemptResult, LockBackend, LockClaim } from '../../lib/backend.js';
import { hasSettled } from '../support/settled.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** One claim whose attempt and release answer when the test says; records what reached the store, in order. */
function backendWithOneClaim() {
  const attempt = deferred<AttemptResult>();
  const released = deferred<boolean>();
  const calls: string[] = [];
  const claim: LockClaim = {
    tryAcquire: () => {
      calls.push('tryAcquire');
      return attempt.promise;
    },
    waitForChange: () => new Promise<void>(() => undefined),
    renew: async (leaseMs) => leaseMs,
    release: () => {
      calls.push('release');
      return released.promise.then((freed) => (calls.push('released'), freed));
    },
  };
  const backend: LockBackend = {
    name: 'scripted',
    claim: () => claim,
    close: async () => void calls.push('close'),
  };
  return { backend, attempt, released, calls };
}

/** Lets every callback queued so far (and those they queue) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

type Scripted = ReturnType<typeof backendWithOneClaim>;

describe('close() while an acquisition is under way', () => {
  // The give-back's answer: true when the store held the granted lock, false when the failed attempt had taken nothing.
  // The caller hears that the instance is shutting down when the store granted the lock, and the store's failure when it failed.
  it.each<[string, (attempt: Scripted['attempt']) => void, boolean, Function]>([
    [
      'gives back a lock granted while closing',
      (attempt) => attempt.resolve({ acquired: true, fence: 1, validityMs: 30_000 }),
      true,
      LockShuttingDownError,
    ],
    [
      'cleans up after an attempt that failed while closing',
      (attempt) => attempt.reject(new Error('connection reset')),
      false,
      LockBackendError,
    ],
  ])('%s before it closes the clients', async (_name, answer, heldInStore, expected) => {
    const { backend, attempt, released, calls } = backendWithOneClaim();
    const engine = new LockEngine(backend, { leaseMs: 30_000, waitMs: 0 });
    const acquiring = engine.acquire('k').catch((error: unknown) => error);
    await settle();
    const closing = engine.close();
    answer(attempt);
    await settle();
    // The answer came too late: the claim is given back in the store, and the clients wait for that.
    expect(calls).toEqual(['tryAcquire', 'release']);
    expect(await hasSettled(closing)).toBe(false);
    released.resolve(heldInStore);
    await closing;
    expect(calls).toEqual(['tryAcquire', 'release', 'released', 'close']);
    expect(await acquiring).toBeInstanceOf(expected);
  });
});

describe('close() and the store calls nobody awaits any more (fake timers)', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  /** A store that grants and renews at once, and answers a release when the test says. */
  function backendAnsweringReleasesLater() {
    const calls: string[] = [];
    const answers: { release?: () => void } = {};
    const backend: LockBackend = {
      name: 'scripted',
      claim: () => ({
        tryAcquire: async () => ({ acquired: true, fence: 1, validityMs: 3_000 }),
        waitForChange: () => new Promise<void>(() => undefined),
        renew: async (leaseMs) => leaseMs,
        release: () =>
          new Promise<boolean>((resolve) => (answers.release = () => (calls.push('release answered'), resolve(true)))),
      }),
      close: async () => void calls.push('close'),
    };
    return { backend, calls, answers };
  }

  it("lets a release its holder stopped waiting for reach the store's answer before it closes the clients", async () => {
    jest.useFakeTimers();
    const { backend, calls, answers } = backendAnsweringReleasesLater();
    const engine = new LockEngine(backend, { leaseMs: 3_000, waitMs: 0 });
    const lock = await engine.acquire('k');
    const releasing = lock.release().catch((error: unknown) => error);
    await jest.advanceTimersByTimeAsync(RELEASE_TIMEOUT_MS);
    expect(await releasing).toBeInstanceOf(LockBackendError);
    const closing = engine.close();
    await jest.advanceTimersByTimeAsync(CLOSE_TIMEOUT_MS / 2);
    expect(calls).toEqual([]);
    answers.release!();
    await closing;
    expect(calls).toEqual(['release answered', 'close']);
  });
});
