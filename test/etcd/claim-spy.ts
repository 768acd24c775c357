import type { LockBackend } from '../../lib/index.js';

/** Counts each claim's attempts, and tells when a claim was answered busy (it then holds a place in the queue). */
export class ClaimSpy {
  /** Attempts per claim, in the order the claims were made. */
  readonly attempts: { owner: string; count: number }[] = [];
  private busy = 0;
  private readonly listeners = new Set<() => void>();

  wrap(backend: LockBackend): LockBackend {
    return {
      name: backend.name,
      capabilities: backend.capabilities,
      close: () => backend.close(),
      claim: (request) => {
        const inner = backend.claim(request);
        const record = { owner: request.owner, count: 0 };
        this.attempts.push(record);
        return {
          tryAcquire: async () => {
            record.count++;
            const result = await inner.tryAcquire();
            if (!result.acquired && record.count === 1) this.markBusy();
            return result;
          },
          waitForChange: (maxMs, signal) => inner.waitForChange(maxMs, signal),
          renew: (leaseMs) => inner.renew(leaseMs),
          release: () => inner.release(),
        };
      },
    };
  }

  /** Resolves once `count` claims in all have been answered busy on their first attempt. */
  whenBusy(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.busy < count) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }

  private markBusy(): void {
    this.busy++;
    for (const listener of [...this.listeners]) listener();
  }
}
