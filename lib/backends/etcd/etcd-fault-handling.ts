import { AsyncLocalStorage } from 'node:async_hooks';
import type { IOptions } from 'etcd3';
import { monotonicNow, sleep } from '../../util/clock.js';
import { MemberHealth, MemberSkippedError, type MemberProbe } from './etcd-member-health.js';
/** A per-attempt deadline never below this: a healthy etcd answers in milliseconds, a loaded one within a second. */
const MIN_ATTEMPT_MS = 1_000;

/** @internal How long one attempt of a call may take: the call's deadline shared among the members, at least 1 s. */
export function attemptTimeoutMs(requestTimeoutMs: number, hostCount: number): number {
  return Math.min(requestTimeoutMs, Math.max(MIN_ATTEMPT_MS, requestTimeoutMs / hostCount));
}

/** @internal What the fault handling needs to know of the driver. */
interface FaultHandlingOptions {
  readonly hostCount: number;
  readonly requestTimeoutMs: number;
  /** Whether an attempt failed for want of an answer (unreachable, or deadline exceeded): worth trying on another member. */
  isUnanswered(error: unknown): boolean;
  /** Asks one member whether it serves quorum requests, to take it back once it went unanswered. */
  probe: MemberProbe;
}

/** Callbacks of {@link noticeUnansweredAttempts} for the calls made inside it. */
const unansweredWatch = new AsyncLocalStorage<() => void>();
/** When the call being made must have its answer (monotonic ms), for the deadline of each of its attempts. */
const callDeadline = new AsyncLocalStorage<number>();

/**
 * @internal
 * Runs `call` (etcd calls); `onUnanswered` is called once one of their attempts went unanswered,
 * retried elsewhere or not: etcd may still apply it later (a member that was cut off, or a request
 * it timed out on after proposing it).
 */
export function noticeUnansweredAttempts<T>(call: () => Promise<T>, onUnanswered: () => void): Promise<T> {
  return unansweredWatch.run(onUnanswered, call);
}

/**
 * @internal
 * etcd3's default fault handling does not suit a lock: it retries a timed-out call three times
 * (a hung etcd answers after 3 x the deadline), opens a circuit breaker for 5 s after three
 * failures (so calls keep failing 5 s after etcd is back, and held locks lapse), and does not try
 * another member when one stops answering with its connection open. Here:
 * - each attempt of a plain call gets a share of the call's deadline ({@link attemptTimeoutMs});
 *   one that goes unanswered (deadline exceeded, unreachable) is tried on the next member while the
 *   call's deadline lasts, so a member that hangs costs a call one share, not the whole deadline;
 * - a member whose attempt went unanswered is down ({@link MemberHealth}): passed over, its streams
 *   (the watch stream) cancelled so that etcd3 opens them again on another member, and probed until
 *   it answers a quorum read; while every member is down (a leader lost, its cluster electing), an
 *   attempt waits for the first to answer, for up to three quarters of the call's deadline;
 * - watches reconnect within 2 s.
 *
 * These are the policies etcd3 takes (`faultHandling.host`, `.global`, `.watchBackoff`); they
 * implement only what etcd3 calls of cockatiel's (`execute`, and `next`/`duration` of a backoff),
 * so cockatiel need not be a dependency, and a member is skipped only while another one is
 * preferable (cockatiel's breaker refuses every call once all are open). `checkMembers` probes the
 * members (a watch went silent); `close` stops the probes.
 */
export function lockFaultHandling(
  options: FaultHandlingOptions,
): Required<Pick<IOptions, 'faultHandling' | 'defaultCallOptions'>> & { checkMembers(): Promise<void>; close(): void } {
  const { hostCount, requestTimeoutMs, isUnanswered, probe } = options;
  const attemptMs = attemptTimeoutMs(requestTimeoutMs, hostCount);
  const members = new MemberHealth(isUnanswered, probe);
  const nextMemberOnUnanswered = {
    async execute<T>(call: (context: { signal: AbortSignal; attempt: number }) => Promise<T>): Promise<T> {
      const signal = new AbortController().signal;
      const deadline = monotonicNow() + requestTimeoutMs;
      for (let attempt = 0; ; attempt++) {
        if (members.allDown) await members.waitForUp(deadline - requestTimeoutMs / 4 - monotonicNow());
        try {
          return await callDeadline.run(deadline, () => call({ signal, attempt }));
        } catch (error) {
          // Every member passed over within one pass of etcd3's shuffle (possible when two are): go on.
          if (!(error instanceof MemberSkippedError)) {
            if (!isUnanswered(error)) throw error;
            unansweredWatch.getStore()?.();
          }
          if (attempt + 1 >= hostCount + 1 || monotonicNow() >= deadline) throw error;
          await sleep(25);
        }
      }
    },
  };
  // A plain call's attempt ends at its share of the deadline, or the call's own deadline, whichever comes first.
  const defaultCallOptions = (context: { isStream: boolean }) => {
    if (context.isStream) return {};
    const now = monotonicNow();
    const callEnds = callDeadline.getStore() ?? now + requestTimeoutMs;
    return { deadline: Date.now() + Math.max(1, Math.min(attemptMs, callEnds - now)) };
  };
  return {
    faultHandling: {
      host: (host: string) => members.member(host) as never,
      global: nextMemberOnUnanswered as never,
      watchBackoff: { next: () => backoff(0) } as never,
    },
    defaultCallOptions,
    checkMembers: () => members.checkMembers(),
    close: () => members.close(),
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
