/** Monotonic milliseconds: immune to wall-clock jumps. Used for every lease and wait deadline. */
export const monotonicNow = (): number => performance.now();

/** setTimeout's largest delay; longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A timer that does not keep the process alive. */
export function unrefTimer(callback: () => void, ms: number): NodeJS.Timeout {
  const timer = setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS));
  timer.unref?.();
  return timer;
}

/** Resolves after `ms`; does not keep the process alive (a retry loop that closing may abandon). */
export function unrefSleep(ms: number): Promise<void> {
  return new Promise((resolve) => unrefTimer(resolve, ms));
}

/** Resolves after `ms`, or at once when `signal` aborts. Never rejects. Keeps the process alive: someone is waiting. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A sleep that can be ended early: `done` resolves after `ms`, on `wake()`, or when `signal` aborts. */
interface WakeableSleep {
  readonly done: Promise<void>;
  wake(): void;
}

/**
 * Like `sleep`, plus `wake()`. One timer and one abort listener, no AbortController: a waiter on a
 * busy lock sleeps like this on every hand-off, where a controller per sleep cost more than the rest.
 */
export function wakeableSleep(ms: number, signal: AbortSignal): WakeableSleep {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => wake(), Math.min(Math.max(0, ms), MAX_TIMER_MS));
    wake = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', wake);
      resolve();
    };
    signal.addEventListener('abort', wake);
  });
  return { done, wake: () => wake() };
}
