import type { AttemptResult, ClaimRequest, LockBackend, LockClaim } from '../../lib/backend.js';
import { MemoryBackend } from '../../lib/index.js';

/**
 * A memory backend whose operations a unit test can intercept: count calls, make renewals hang,
 * fail or answer "not yours". For engine unit tests only (the contract suite uses real stores).
 */
export class ScriptedBackend implements LockBackend {
  readonly name = 'scripted';
  readonly store = new MemoryBackend();
  readonly requests: ClaimRequest[] = [];
  calls = { tryAcquire: 0, renew: 0, release: 0, waitForChange: 0, close: 0 };
  renewBehaviour: 'ok' | 'hang' | 'fail' | 'lost' = 'ok';
  acquireBehaviour: 'ok' | 'fail' = 'ok';
  releaseBehaviour: 'ok' | 'fail' = 'ok';
  /** Overrides the validity a successful attempt reports. */
  validityMs: number | undefined;

  claim(request: ClaimRequest): LockClaim {
    this.requests.push(request);
    const inner = this.store.claim(request);
    return {
      tryAcquire: async (): Promise<AttemptResult> => {
        this.calls.tryAcquire++;
        if (this.acquireBehaviour === 'fail') throw new Error('connection refused');
        const result = await inner.tryAcquire();
        return result.acquired && this.validityMs !== undefined ? { ...result, validityMs: this.validityMs } : result;
      },
      waitForChange: (maxMs, signal) => {
        this.calls.waitForChange++;
        return inner.waitForChange(maxMs, signal);
      },
      renew: async (leaseMs) => {
        this.calls.renew++;
        if (this.renewBehaviour === 'hang') return new Promise<never>(() => undefined);
        if (this.renewBehaviour === 'fail') throw new Error('store timeout');
        if (this.renewBehaviour === 'lost') return false;
        return inner.renew(leaseMs);
      },
      release: async () => {
        this.calls.release++;
        if (this.releaseBehaviour === 'fail') throw new Error('connection reset');
        return inner.release();
      },
    };
  }

  async close(): Promise<void> {
    this.calls.close++;
  }
}
