import { describe, expect, it } from '@jest/globals';
import { InvalidLockArgumentError, LockEngine, LockLostError, MemoryBackend, type LockEvent } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';

/** The memory store without the minHold capability, as a third-party backend written before it would be. */
function storeWithoutMinHold(): LockBackend {
  const memory = new MemoryBackend();
  return {
    name: 'custom',
    capabilities: { read: true },
    claim: (request) => memory.claim(request),
    close: () => memory.close(),
  };
}

describe('minHoldMs / maxHoldMs in the engine', () => {
  it('a re-entrant call shares the outer lock: its release starts no hold; the outermost release does', async () => {
    const engine = new LockEngine(new MemoryBackend());
    let heldAfterInner: boolean | undefined;
    await engine.withLock(
      'job',
      async () => {
        await engine.withLock('job', () => undefined, { minHoldMs: 60_000 });
        // Still the outer holder's, not kept by a hold: the outer lock is live.
        heldAfterInner = !engine.current()!.signal.aborted;
      },
      { minHoldMs: 200 },
    );
    expect(heldAfterInner).toBe(true);
    // The outer options count: kept for 200 ms, not 60 s.
    expect(await engine.tryAcquire('job')).toBeNull();
    const next = await engine.acquire('job', { waitMs: 5_000 });
    await next.release();
    await engine.close();
  });

  it('a store without the capability refuses minHoldMs by name, before anything reaches it', async () => {
    const engine = new LockEngine(storeWithoutMinHold());
    const error = await engine.acquire('job', { minHoldMs: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toMatch(/minHoldMs .* is not supported by the custom backend/);
    // maxHoldMs is the engine's own: every store has it.
    const lock = await engine.acquire('job', { maxHoldMs: 1_000 });
    await lock.release();
    await engine.close();
  });

  it("maxHoldMs emits a lost event, and the holder's late release reports the loss without freeing anyone else", async () => {
    const engine = new LockEngine(new MemoryBackend(), { leaseMs: 300 });
    const events: LockEvent[] = [];
    engine.events.subscribe((event) => events.push(event));
    const hung = await engine.acquire('job', { maxHoldMs: 100 });
    await new Promise((resolve) => hung.signal.addEventListener('abort', resolve, { once: true }));
    expect(events.find((event) => event.type === 'lost')).toMatchObject({
      key: 'job',
      error: expect.any(LockLostError),
    });
    // Renewal stopped: the key frees within the lease, without the holder releasing.
    const next = await engine.acquire('job', { waitMs: 2_000 });
    await expect(hung.release()).rejects.toBeInstanceOf(LockLostError);
    expect(await engine.tryAcquire('job')).toBeNull();
    await next.release();
    await engine.close();
  });
});
