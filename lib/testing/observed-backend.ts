import type { AttemptResult, ClaimRequest, LockBackend } from '../engine/lock-backend.js';

/** What a test wants to hear about each claim of a backend. */
interface ClaimHooks {
  /** A claim was made (before its first attempt). */
  claimed?(request: ClaimRequest): void;
  /** An attempt answered; `attempt` counts from 1 for each claim. */
  attempted?(request: ClaimRequest, result: AttemptResult, attempt: number): void;
  /** A claim starts waiting for a change (its busy attempt is done). */
  waiting?(request: ClaimRequest): void;
}

/** The backend, unchanged, telling `hooks` what its claims do. */
export function observeBackend(backend: LockBackend, hooks: ClaimHooks): LockBackend {
  return {
    name: backend.name,
    capabilities: backend.capabilities,
    ping: backend.ping && (() => backend.ping!()),
    close: () => backend.close(),
    claim(request) {
      const inner = backend.claim(request);
      hooks.claimed?.(request);
      let attempts = 0;
      return {
        async tryAcquire() {
          const result = await inner.tryAcquire();
          hooks.attempted?.(request, result, ++attempts);
          return result;
        },
        waitForChange(maxMs, signal) {
          hooks.waiting?.(request);
          return inner.waitForChange(maxMs, signal);
        },
        renew: (leaseMs) => inner.renew(leaseMs),
        release: () => inner.release(),
      };
    },
  };
}

/**
 * Tells when claims were first answered busy (queued, for a queueing store): after that a waiter
 * is surely waiting, so a test can release a holder and know the waiter was woken by the release.
 * Also counts each claim's attempts, in the order the claims were made.
 */
export class BusySpy {
  /** Attempts per claim, in the order the claims were made. */
  readonly attempts: { owner: string; count: number }[] = [];
  private readonly busy = new Map<string, number>();
  private busyInAll = 0;
  private readonly listeners = new Set<() => void>();

  wrap(backend: LockBackend): LockBackend {
    return observeBackend(backend, {
      claimed: (request) => this.attempts.push({ owner: request.owner, count: 0 }),
      attempted: (request, result, attempt) => {
        const record = this.attempts.find((a) => a.owner === request.owner);
        if (record) record.count = attempt;
        if (result.acquired || attempt !== 1) return;
        this.busy.set(request.key, (this.busy.get(request.key) ?? 0) + 1);
        this.busyInAll++;
        for (const listener of [...this.listeners]) listener();
      },
    });
  }

  /** Resolves once `count` claims (on `storeKey`, or on any key) have been answered busy. */
  whenBusy(count: number, storeKey?: string): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if ((storeKey === undefined ? this.busyInAll : (this.busy.get(storeKey) ?? 0)) < count) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
    });
  }
}
