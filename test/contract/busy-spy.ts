import type { LockBackend } from '../../lib/index.js';

/**
 * Tells when claims were answered busy: after that a waiter is surely waiting, so a test can
 * release a holder and know the waiter was woken by the release, not that it came late.
 */
export class BusySpy {
  private readonly busy = new Map<string, number>();
  private readonly listeners = new Set<() => void>();

  wrap(backend: LockBackend): LockBackend {
    return {
      name: backend.name,
      capabilities: backend.capabilities,
      close: () => backend.close(),
      claim: (request) => {
        const inner = backend.claim(request);
        let counted = false;
        return {
          tryAcquire: async () => {
            const result = await inner.tryAcquire();
            if (!result.acquired && !counted) {
              counted = true;
              this.mark(request.key);
            }
            return result;
          },
          waitForChange: (maxMs, signal) => inner.waitForChange(maxMs, signal),
          renew: (leaseMs) => inner.renew(leaseMs),
          release: () => inner.release(),
        };
      },
    };
  }

  /** Resolves once `count` different claims on `storeKey` have been answered busy. */
  whenBusy(storeKey: string, count = 1): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if ((this.busy.get(storeKey) ?? 0) < count) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }

  private mark(storeKey: string): void {
    this.busy.set(storeKey, (this.busy.get(storeKey) ?? 0) + 1);
    for (const listener of [...this.listeners]) listener();
  }
}
