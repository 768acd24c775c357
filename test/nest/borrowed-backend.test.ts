import { describe, expect, it } from '@jest/globals';
import type { BackendCapabilities, ClaimRequest, LockBackend, LockClaim, LockInspection } from '../../lib/backend.js';
import { MemoryBackend } from '../../lib/index.js';
import { borrowedBackend } from '../../lib/nest/store/borrowed-backend.js';

/**
 * Every member of LockBackend. `satisfies` makes this list exact: a member added to the interface
 * fails to compile here until it is listed, and the test below then checks that it passes through.
 */
const MEMBERS = Object.keys({
  name: true,
  address: true,
  capabilities: true,
  claim: true,
  inspection: true,
  ping: true,
  close: true,
} satisfies Record<keyof LockBackend, true>) as (keyof LockBackend)[];

/** A backend with every member, whose methods need their `this` (a private field) and record their calls. */
class FullBackend implements LockBackend {
  readonly name = 'full';
  readonly address = 'full.example:1';
  readonly inspection: LockInspection = new MemoryBackend().inspection;
  readonly calls: string[] = [];
  #store = new MemoryBackend();

  get capabilities(): BackendCapabilities {
    return { read: true, fenced: true };
  }

  claim(request: ClaimRequest): LockClaim {
    this.calls.push('claim');
    return this.#store.claim(request);
  }

  async ping(): Promise<void> {
    this.calls.push('ping');
  }

  async close(): Promise<void> {
    this.calls.push('close');
  }
}

describe('a backend object passed to the module (borrowed: used, never closed)', () => {
  it('passes every member of LockBackend but close through, methods bound to the backend', async () => {
    const backend = new FullBackend();
    const borrowed = borrowedBackend(backend);
    for (const member of MEMBERS) {
      if (member === 'close') continue;
      const value = borrowed[member];
      if (typeof value === 'function') expect(typeof backend[member]).toBe('function');
      else expect(value).toEqual(backend[member]);
    }
    expect(borrowed.name).toBe('full');
    expect(borrowed.capabilities).toEqual({ read: true, fenced: true });
    expect(borrowed.inspection).toBe(backend.inspection);
    const claim = borrowed.claim({
      key: 'k',
      owner: 'o',
      leaseMs: 1_000,
      mode: 'exclusive',
      fair: false,
      permits: undefined,
      onLost: () => undefined,
    });
    await expect(claim.tryAcquire()).resolves.toMatchObject({ acquired: true });
    await claim.release();
    await borrowed.ping!();
    await borrowed.close();
    expect(backend.calls).toEqual(['claim', 'ping']);
  });

  it('leaves out what the backend leaves out, and passes through members it has beyond the interface', () => {
    const minimal = { name: 'minimal', claim: () => ({}) as LockClaim, close: async () => undefined, extra: 42 };
    const borrowed = borrowedBackend(minimal) as LockBackend & { extra?: number };
    expect(borrowed.ping).toBeUndefined();
    expect(borrowed.inspection).toBeUndefined();
    expect(borrowed.capabilities).toBeUndefined();
    expect(borrowed.extra).toBe(42);
  });
});
