import { monotonicNow, wakeableSleep } from '../../util/clock.js';
import { STAND_BACK_MS_PER_PROCESS, type HandOffReceiver } from './local-turn.js';

/**
 * @internal The claims of this process waiting for one lock, in arrival order. A release message
 * wakes only the oldest sleeping one: the others would only lose the race to it (no herd in a
 * process). A message that finds nobody asleep is kept for the next one to sleep.
 */
export class ChannelWaiters {
  private readonly waiters: ReleaseWaiter[] = [];
  /** A wake-up nobody took yet: the next claim that goes to sleep returns at once. */
  private pending = false;
  /** Resolves true once the subscription is active, false if it failed (then a later wait tries again). */
  subscription: Promise<boolean> | undefined;
  /** Monotonic time at which the subscription became active. */
  activeSince = Infinity;
  /** Monotonic time by which the current holder's lease ends, as last seen by a claim of this process. */
  private holderDeadline = -Infinity;
  /** Until then, plain claims of this process leave the lock to waiters of other processes (see standBack). */
  private yieldUntil = -Infinity;
  /** Releases by other processes still to hear before this process stands back no more. */
  private turnsToLetPass = 0;
  /** Other processes that heard this process's latest release of the lock (each listens while it waits for it). */
  othersWaiting = 0;

  constructor(readonly channel: string) {}

  get size(): number {
    return this.waiters.length;
  }

  /** The backend's subscriber listens on this channel. */
  get isSubscribed(): boolean {
    return this.activeSince !== Infinity;
  }

  add(waiter: ReleaseWaiter): void {
    this.waiters.push(waiter);
  }

  /** Removes `waiter`; passes its wake-up on if it got one and never used it. */
  remove(waiter: ReleaseWaiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
    if (waiter.takeUnusedWake()) this.wakeOne();
  }

  /** The lock may be free: let one claim (the oldest asleep) try again. */
  wakeOne(): void {
    const sleeper = this.waiters.find((waiter) => waiter.isAsleep);
    if (sleeper) sleeper.wake();
    else this.pending = true;
  }

  /**
   * Lets the first sleeping waiter after `after` (after none: the oldest) try again, without keeping
   * the wake-up when nobody sleeps. For hand-offs within the queue: a reader that got in lets the
   * next one try too; a woken waiter that found the key free but others queued first passes its turn on.
   */
  wakeNext(after?: ReleaseWaiter): void {
    const from = after ? this.waiters.indexOf(after) + 1 : 0;
    this.waiters
      .slice(from)
      .find((waiter) => waiter.isAsleep)
      ?.wake();
  }

  /**
   * The oldest sleeping waiter, if it can take the lock over from a releasing claim of this process
   * (a plain claim outside the key's queue). A fair or read claim asleep first means no local
   * hand-off: it goes through Redis, in order.
   */
  handOffReceiver(): HandOffReceiver | undefined {
    const receiver = this.waiters.find((waiter) => waiter.isAsleep)?.receiver;
    return receiver?.canReceive ? receiver : undefined;
  }

  /** Takes a kept wake-up, if any. */
  takePending(): boolean {
    const pending = this.pending;
    this.pending = false;
    return pending;
  }

  /** A claim of this process saw the lock held until `deadline` (monotonic; from a busy answer, or it took the lock itself). */
  noteHolderUntil(deadline: number | undefined): void {
    if (deadline !== undefined) this.holderDeadline = deadline;
  }

  /**
   * For a new claim of this process: when others already queue here for a lock that is still held,
   * the time left on that holder's lease (the new claim goes behind them without asking Redis, as
   * in the memory backend); otherwise undefined.
   */
  queuedAheadTtl(): number | undefined {
    const left = this.holderDeadline - monotonicNow();
    return this.waiters.length > 0 && left > 0 ? Math.ceil(left) : undefined;
  }

  /**
   * This process just freed the lock in Redis, and `others` other processes heard it: its plain
   * claims stand back until each of those had a turn (as many releases by other processes), or
   * STAND_BACK_MS_PER_PROCESS each at most. Whoever asks Redis first wins a freed key, and the
   * process whose turn just ended hears its own release first: without this, two quick processes
   * could pass the lock between them while others wait.
   */
  standBack(others: number): void {
    this.othersWaiting = others;
    if (others <= 0) return;
    this.turnsToLetPass = others;
    this.yieldUntil = monotonicNow() + others * STAND_BACK_MS_PER_PROCESS;
  }

  /**
   * A release was announced (`byOther`: by another process): the oldest sleeper tries again. While
   * this process stands back, that try goes no further than this process and sleeps until the end
   * of the stand-back, so a sleeper with a long bound still learns of a release it let pass.
   */
  heardRelease(byOther: boolean): void {
    if (byOther && this.turnsToLetPass > 0 && --this.turnsToLetPass === 0) this.yieldUntil = -Infinity;
    this.wakeOne();
  }

  /** While this process stands back, how much longer (whole ms, at least 1); else undefined. */
  yieldLeft(): number | undefined {
    const left = this.yieldUntil - monotonicNow();
    return left > 0 ? Math.ceil(left) : undefined;
  }

  /** A try that starts now sees every release announced so far: kept wake-ups are used up. */
  noteTry(): void {
    this.pending = false;
  }

  wakeAll(): void {
    for (const waiter of this.waiters) if (waiter.isAsleep) waiter.wake();
  }
}

/** @internal One claim's place among the waiters of its lock. */
export class ReleaseWaiter {
  private wakeUp: (() => void) | undefined;
  private woken = false;
  /** Monotonic start of this claim's latest try. */
  lastTryAt = -Infinity;

  /** `receiver`: the claim, when it can take a lock over from a releasing claim of this process. */
  constructor(readonly receiver?: HandOffReceiver) {}

  get isAsleep(): boolean {
    return this.wakeUp !== undefined;
  }

  /** Call when the claim starts a try: a wake-up it got is used by this try. Returns whether it got one. */
  noteTry(): boolean {
    const woken = this.woken;
    this.lastTryAt = monotonicNow();
    this.woken = false;
    return woken;
  }

  wake(): void {
    this.woken = true;
    const wakeUp = this.wakeUp;
    // No longer asleep from now on, so a second message in the same tick goes to the next waiter.
    this.wakeUp = undefined;
    wakeUp?.();
  }

  /** Whether a wake-up reached this waiter and no try followed it. Clears it. */
  takeUnusedWake(): boolean {
    const unused = this.woken;
    this.woken = false;
    return unused;
  }

  /** Sleeps until woken, `maxMs`, or `signal`. Never rejects. */
  async sleep(maxMs: number, signal: AbortSignal): Promise<void> {
    const sleeping = wakeableSleep(maxMs, signal);
    this.wakeUp = sleeping.wake;
    await sleeping.done;
    this.wakeUp = undefined;
  }
}
