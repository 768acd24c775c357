import { LockBackendError } from '../../errors.js';
import { monotonicNow, sleep } from '../../util/clock.js';
import type { AttemptResult, ClaimRequest, LockClaim } from '../../engine/lock-backend.js';
import { redisLockKeys, type RedisLockKeys } from '../redis/redis-keys.js';
import { releaseHolding, releaseLock } from '../redis/release.js';
import { renewLock } from '../redis/renew.js';
import { acquireOnMaster, type MasterAcquireReply } from './acquire-on-master.js';
import { describeFailures, mayHaveRun } from './node-call.js';
import { acquireVerdict, holdVerdict, runRound, tally, type RoundReply, type Tally } from './quorum-round.js';
import type { RedlockMaster } from './redlock-masters.js';
import { nodeTimeoutFor, type RedlockSettings } from './redlock-options.js';
import { ReleaseWatch, sleepJitter } from './release-watch.js';
import { timeUntilQuorumFree, validityFromRoundStart } from './validity.js';

/**
 * Rounds one `tryAcquire` makes before it calls the store down, when too few masters answer. Each
 * waits twice as long per master as the one before, so a loaded machine's slow answers still
 * count, while dead masters (whose connections are down) cost nothing.
 */
const UNREACHABLE_ROUNDS = 3;
/** A renewal may wait for slow masters up to this share of the lease (it runs at a third of the lease, in the background). */
const RENEW_TIMEOUT_SHARE = 0.1;
/** ...and at most this long. */
const MAX_RENEW_TIMEOUT_MS = 1_000;

/** @internal What every claim of one backend shares. */
export interface RedlockContext {
  readonly name: string;
  readonly masters: readonly RedlockMaster[];
  readonly settings: RedlockSettings;
}

const taken = (reply: MasterAcquireReply) => reply.taken;
const yes = (reply: boolean) => reply;

/**
 * @internal One acquisition over N independent masters (antirez's Redlock): a round sets the key
 * on every master at once; it is ours when a quorum took it within the lease minus the drift.
 */
export class RedlockClaim implements LockClaim {
  private readonly keys: RedisLockKeys;
  private readonly watch: ReleaseWatch;
  /** Per master: a command of ours that may have set the key there ran or may still run, and no answer since says it is gone. */
  private readonly mayHold: boolean[];
  private held = false;
  /** The last round lost votes to a competing contender: back off at random rather than wait for release messages (the contenders' own give-backs). */
  private contended = false;

  constructor(
    private readonly context: RedlockContext,
    private readonly request: ClaimRequest,
  ) {
    this.keys = redisLockKeys(request.key);
    this.watch = new ReleaseWatch(context.masters, this.keys.channel, context.settings.quorum);
    this.mayHold = context.masters.map(() => false);
  }

  async tryAcquire(): Promise<AttemptResult> {
    const startedAt = monotonicNow();
    let replies: RoundReply<MasterAcquireReply>[] = [];
    const nodeTimeoutMs = this.nodeTimeoutMs(this.request.leaseMs);
    for (let round = 0; round < UNREACHABLE_ROUNDS; round++) {
      if (round > 0) await sleep(nodeTimeoutMs);
      const outcome = await this.acquireRound(startedAt, nodeTimeoutMs * 2 ** round);
      if (!Array.isArray(outcome)) return outcome;
      replies = outcome;
    }
    const { masters, settings } = this.context;
    const reachable = replies.filter((reply) => reply.kind === 'answer' || reply.kind === 'pending').length;
    throw new LockBackendError(
      this.context.name,
      `no quorum reachable: only ${reachable} of ${masters.length} masters could answer, ${settings.quorum} needed (${describeFailures(replies, masters)})`,
    );
  }

  async waitForChange(maxMs: number, signal: AbortSignal): Promise<void> {
    try {
      const { retryJitterMs } = this.context.settings;
      if (this.contended) return await sleepJitter(retryJitterMs, maxMs, signal);
      const startedAt = monotonicNow();
      // Woken by a release: a small random delay, so that waiters in different processes rarely start their rounds together (split votes).
      if (await this.watch.wait(maxMs, signal))
        await sleepJitter(retryJitterMs / 4, maxMs - (monotonicNow() - startedAt), signal);
    } catch {
      // Never rejects: the engine simply tries again.
    }
  }

  validityFor(leaseMs: number): number {
    return validityFromRoundStart(leaseMs, this.context.settings.driftFactor);
  }

  async renew(leaseMs: number): Promise<number | false> {
    const { masters, settings } = this.context;
    const targets = masters.filter((_, i) => this.mayHold[i]);
    const startedAt = monotonicNow();
    const replies = await runRound(
      targets,
      (master) => renewLock(master.client, this.keys, this.request.owner, leaseMs),
      Math.max(this.nodeTimeoutMs(leaseMs), Math.min(leaseMs * RENEW_TIMEOUT_SHARE, MAX_RENEW_TIMEOUT_MS)),
      (partial) => holdVerdict(tally(partial, yes), settings.quorum) !== undefined,
    );
    const elapsed = monotonicNow() - startedAt;
    replies.forEach((reply, i) => {
      if (reply.kind === 'answer' && !reply.value) this.mayHold[targets[i].index] = false;
    });
    const verdict = holdVerdict(tally(replies, yes), settings.quorum);
    if (verdict === 'held') {
      const validityMs = validityFromRoundStart(leaseMs, settings.driftFactor);
      return validityMs - elapsed > 0 ? validityMs : false;
    }
    if (verdict === 'lost') return false;
    throw new LockBackendError(
      this.context.name,
      `could not renew on a quorum: ${replies.filter((reply) => reply.kind === 'answer').length} of ${targets.length} masters holding it answered, ${settings.quorum} needed (${describeFailures(replies, targets)})`,
    );
  }

  /**
   * Deletes the key, for this owner only, on every master where a command of ours may have set it.
   * Resolves false only when the lock had been acquired and the answers prove that fewer than a
   * quorum still had it for this owner, counting every silent master as still having it: then
   * another owner could have taken it meanwhile. Silence alone is not a loss. With `holdMs`
   * (minHoldMs), a held key is not deleted but kept for `holdMs` on each master (owner-checked PEXPIRE).
   */
  async release(holdMs?: number): Promise<boolean> {
    this.watch.stop();
    const wasHeld = this.held;
    this.held = false;
    const quorum = this.context.settings.quorum;
    // A held lock's release returns once the verdict is known; the other deletes are on their way all the same.
    const outcome = await this.giveBack(
      wasHeld ? (partial) => holdVerdict(partial, quorum) !== undefined : undefined,
      wasHeld ? holdMs : undefined,
    );
    return !wasHeld || holdVerdict(outcome, quorum) !== 'lost';
  }

  /** One round; the replies when too few masters answered. */
  private async acquireRound(
    callStartedAt: number,
    nodeTimeoutMs: number,
  ): Promise<AttemptResult | RoundReply<MasterAcquireReply>[]> {
    const { masters, settings } = this.context;
    const { owner, leaseMs } = this.request;
    this.watch.noteTry();
    const roundStartedAt = monotonicNow();
    const replies = await runRound(
      masters,
      (master) => acquireOnMaster(master.client, this.keys.lock, owner, leaseMs),
      nodeTimeoutMs,
      (partial) => acquireVerdict(tally(partial, taken), settings.quorum) !== undefined,
    );
    const elapsed = monotonicNow() - roundStartedAt;
    replies.forEach((reply, i) => {
      if (reply.kind === 'answer') this.mayHold[i] = reply.value.taken;
      else if (mayHaveRun(reply)) this.mayHold[i] = true;
    });
    const counts = tally(replies, taken);
    const verdict = acquireVerdict(counts, settings.quorum);
    const validityMs = validityFromRoundStart(leaseMs, settings.driftFactor);
    if (verdict === 'quorum' && validityMs - elapsed > 0) {
      this.held = true;
      this.contended = false;
      this.watch.stop();
      return { acquired: true, fence: undefined, validityMs: roundStartedAt - callStartedAt + validityMs };
    }
    // Not ours: give back what this round may have taken, including on the masters that did not answer.
    await this.giveBack();
    if (verdict === 'unreachable') return replies;
    this.contended = counts.yes > 0;
    const holderTtls = replies.map((reply) =>
      reply.kind === 'answer' && !reply.value.taken ? reply.value.holderTtlMs : undefined,
    );
    return {
      acquired: false,
      holderTtlMs: this.contended ? undefined : timeUntilQuorumFree(settings.quorum, counts.yes, holderTtls),
    };
  }

  /** Runs the owner-checked release (which announces it on the lock's channel) wherever the key may be ours. */
  private async giveBack(decided?: (partial: Tally) => boolean, holdMs?: number): Promise<Tally> {
    const targets = this.context.masters.filter((_, i) => this.mayHold[i]);
    const { owner } = this.request;
    const replies = await runRound(
      targets,
      (master) =>
        holdMs === undefined
          ? releaseLock(master.client, this.keys, owner)
          : releaseHolding(master.client, this.keys, owner, holdMs),
      this.nodeTimeoutMs(this.request.leaseMs),
      decided && ((partial) => decided(tally(partial, yes))),
    );
    replies.forEach((reply, i) => {
      // Commands run in order on a connection: an answer here comes after every earlier acquisition of ours.
      if (reply.kind === 'answer') this.mayHold[targets[i].index] = false;
    });
    return tally(replies, yes);
  }

  private nodeTimeoutMs(leaseMs: number): number {
    return nodeTimeoutFor(this.context.settings, leaseMs);
  }
}
