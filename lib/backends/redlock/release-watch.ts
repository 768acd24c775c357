import { monotonicNow, sleep } from '../../util/clock.js';
import { ReleaseWaiter, type ChannelWaiters } from '../redis/channel-waiters.js';
import type { RedlockMaster } from './redlock-masters.js';

/**
 * @internal One claim's ears on every master: the same waiter joins the release channel of its
 * lock on each master's listener, so a release message from any master wakes it.
 *
 * A holder has its key on at least a quorum of masters and its release publishes on each of them.
 * Once this claim listens on `masters - quorum + 1` masters, at least one of them is among the
 * holder's, so a release is heard; with fewer (masters down), the engine's bound (the holder's
 * remaining lease) still ends the wait.
 */
export class ReleaseWatch {
  private readonly waiter = new ReleaseWaiter();
  private entries: ChannelWaiters[] | undefined;
  private readonly enough: number;

  constructor(
    private readonly masters: readonly RedlockMaster[],
    private readonly channel: string,
    quorum: number,
  ) {
    this.enough = masters.length - quorum + 1;
  }

  /** Call when a round starts: it sees every release announced so far. */
  noteTry(): void {
    this.waiter.noteTry();
    for (const entry of this.entries ?? []) entry.noteTry();
  }

  /** Sleeps until a release message, `maxMs`, or `signal`. Resolves true when woken by a message. Never rejects. */
  async wait(maxMs: number, signal: AbortSignal): Promise<boolean> {
    const startedAt = monotonicNow();
    const entries = (this.entries ??= this.masters.map((master) => master.listener.join(this.channel, this.waiter)));
    await this.subscriptions(entries, maxMs, signal);
    if (signal.aborted) return false;
    const lastTryAt = this.waiter.lastTryAt;
    const heardBefore = entries.filter((entry) => entry.activeSince < lastTryAt).length;
    // A release between the last round and these subscriptions was announced to nobody: try again.
    if (
      heardBefore < this.enough &&
      entries.some((entry) => Number.isFinite(entry.activeSince) && entry.activeSince >= lastTryAt)
    )
      return true;
    if (entries.some((entry) => entry.takePending())) return true;
    await this.waiter.sleep(maxMs - (monotonicNow() - startedAt), signal);
    return !signal.aborted && this.waiter.takeUnusedWake();
  }

  /** Leaves every channel; a wake-up this claim got and did not use goes to another waiter. */
  stop(): void {
    if (!this.entries) return;
    this.entries.forEach((entry, i) => this.masters[i].listener.leave(entry, this.waiter));
    this.entries = undefined;
  }

  /** Waits until enough subscriptions are active, all have settled, `maxMs` passed, or `signal` aborts. */
  private subscriptions(entries: readonly ChannelWaiters[], maxMs: number, signal: AbortSignal): Promise<void> {
    const done = new AbortController();
    const stop = AbortSignal.any([signal, done.signal]);
    return new Promise((resolve) => {
      let active = 0;
      let settled = 0;
      entries.forEach((entry, i) => {
        void this.masters[i].listener.subscribed(entry, maxMs, stop).then((ok) => {
          settled++;
          if (ok) active++;
          if (active >= this.enough || settled === entries.length) {
            done.abort();
            resolve();
          }
        });
      });
    });
  }
}

/** @internal Sleeps a random share of `maxJitterMs`, at most `maxMs`. */
export function sleepJitter(maxJitterMs: number, maxMs: number, signal: AbortSignal): Promise<void> {
  // Through a signal of its own: the engine's signal is shared by every waiting claim, and sleep adds a listener to it.
  return sleep(Math.min(Math.random() * maxJitterMs, Math.max(0, maxMs)), AbortSignal.any([signal]));
}
