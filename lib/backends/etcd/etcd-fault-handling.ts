import type { IOptions } from 'etcd3';

/**
 * etcd3's default fault handling does not suit a lock: it retries a timed-out call three times
 * (a hung etcd answers after 3 x the deadline) and opens a circuit breaker for 5 s after three
 * failures (so calls keep failing 5 s after etcd is back, and held locks lapse). Here a call that
 * could not reach a member is tried on the next one, a failed call fails at once (the engine
 * renews again well before the lease lapses), and watches reconnect within 2 s.
 *
 * The objects below implement only what etcd3 calls of its cockatiel policies (`execute`, and
 * `next`/`duration` of a backoff), so cockatiel need not be a dependency.
 * @internal
 */
export function lockFaultHandling(hostCount: number, isUnreachable: (error: unknown) => boolean): NonNullable<IOptions['faultHandling']> {
  // async: a call that throws synchronously still becomes a rejection, as with cockatiel.
  const direct = { execute: async <T>(call: (context: { signal: AbortSignal }) => T) => call({ signal: new AbortController().signal }) };
  const nextHostOnUnreachable = {
    async execute<T>(call: (context: { signal: AbortSignal; attempt: number }) => Promise<T>): Promise<T> {
      const signal = new AbortController().signal;
      for (let attempt = 0; ; attempt++) {
        try {
          return await call({ signal, attempt });
        } catch (error) {
          if (attempt + 1 >= hostCount + 1 || !isUnreachable(error)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
    },
  };
  return {
    host: () => direct as never,
    global: nextHostOnUnreachable as never,
    watchBackoff: { next: () => backoff(0) } as never,
  };
}

interface Backoff {
  readonly duration: number;
  next(): Backoff;
}

/** 0, 100, 200, 400 ... 2000 ms between attempts to reopen a watch stream. */
function backoff(delayMs: number): Backoff {
  return { duration: delayMs, next: () => backoff(Math.min(2_000, Math.max(100, delayMs * 2))) };
}
