import { MemoryBackend } from '../../lib/index.js';
import type { ClaimRequest, LockBackend, LockClaim } from '../../lib/backend.js';

/** A memory store that knows which claims hold a lock right now, so a test can prove nothing stayed locked. */
export class CountingBackend implements LockBackend {
  readonly name = 'counting';
  private readonly store = new MemoryBackend();
  readonly capabilities = this.store.capabilities;
  readonly held = new Set<string>();
  claims = 0;

  claim(request: ClaimRequest): LockClaim {
    this.claims++;
    const claim = this.store.claim(request);
    const id = `${request.key}#${request.owner}`;
    return {
      tryAcquire: async () => {
        const result = await claim.tryAcquire();
        if (result.acquired) this.held.add(id);
        return result;
      },
      waitForChange: (maxMs, signal) => claim.waitForChange(maxMs, signal),
      renew: (leaseMs) => claim.renew(leaseMs),
      release: async () => {
        this.held.delete(id);
        return claim.release();
      },
    };
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
