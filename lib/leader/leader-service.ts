import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import type { LockEngine } from '../engine/lock-engine.js';
import { assertKey, checkLeaseMs, describe } from '../engine/lock-options.js';
import { InvalidLockArgumentError } from '../errors.js';
import { LOCK_ENGINE } from '../nest/lock-constants.js';
import { LeaderCampaign, type CampaignReporter } from './leader-campaign.js';
import { LeaderMessages } from './leader-messages.js';
import {
  leadershipKey,
  type AfterTask,
  type Campaign,
  type LeaderInfo,
  type Leadership,
  type LeadershipChange,
  type LeadOptions,
} from './leadership.js';

const AFTER_TASK: readonly AfterTask[] = ['campaign', 'stop'];

/** @internal The leader service of each engine, for `@LeaderOnly()` methods (which find the engine through the lock registry). */
export const leaderRegistry = new WeakMap<LockEngine, LeaderService>();

/**
 * Leader election on the module's lock store: one leader per name across every instance of the
 * application. A leadership is the lock `leader:{name}` held with an unbounded wait and renewed in
 * the background; its fence is the leader's term. Injectable (`@InjectLeaderService(name)` for a
 * named store), or `new LeaderService(engine)` on a `LockEngine` without Nest (call `close()` before
 * the engine's).
 *
 * ```ts
 * leaders.lead('outbox-relay', async ({ term, signal }) => {
 *   while (!signal.aborted) await relay.sendBatch({ term, signal });
 * });
 * ```
 * On application shutdown every campaign stops first: a leader releases its leadership, so a
 * follower takes over at once rather than after the lease or session timeout.
 */
@Injectable()
export class LeaderService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('LeaderElection');
  private readonly campaigns = new Map<string, LeaderCampaign>();
  private readonly changes = new Map<string, BehaviorSubject<LeadershipChange>>();

  constructor(@Inject(LOCK_ENGINE) private readonly engine: LockEngine) {
    leaderRegistry.set(engine, this);
  }

  /** This instance's label, as `leader()` reports it on every instance. */
  get instance(): string {
    return this.engine.instance;
  }

  /**
   * Campaigns for `name` until stopped: each time this instance becomes leader it runs `task` with
   * the {@link Leadership} (`term`, `signal`, `since`); when the task returns (or throws, logged) it
   * resigns and campaigns again, or stops with `afterTask: 'stop'`. One campaign per name per
   * instance. Refused on Redlock (no terms). Store errors are logged and retried with backoff.
   */
  lead(name: string, task: (leadership: Leadership) => unknown, options: LeadOptions = {}): Campaign {
    checkName(name);
    if (typeof task !== 'function') throw new InvalidLockArgumentError(LeaderMessages.task(name, describe(task)));
    if (typeof options !== 'object' || options === null)
      throw new InvalidLockArgumentError(LeaderMessages.options(name, describe(options)));
    const { leaseMs, afterTask = 'campaign' } = options;
    if (leaseMs !== undefined) checkLeaseMs(leaseMs);
    if (!AFTER_TASK.includes(afterTask))
      throw new InvalidLockArgumentError(LeaderMessages.afterTask(name, describe(afterTask)));
    if (!this.engine.supports('fenced'))
      throw new InvalidLockArgumentError(LeaderMessages.unfenced(this.engine.backend.name));
    if (this.engine.isClosed) throw new InvalidLockArgumentError(LeaderMessages.closed());
    if (this.campaigns.get(name)?.stopped === false)
      throw new InvalidLockArgumentError(LeaderMessages.alreadyCampaigning(name));
    const campaign = new LeaderCampaign(this.engine, { name, task, leaseMs, afterTask }, this.reporter(name));
    this.campaigns.set(name, campaign);
    return {
      stop: async () => {
        await campaign.stop();
        if (this.campaigns.get(name) === campaign) this.campaigns.delete(name);
      },
    };
  }

  /** This instance leads `name` now (it holds the leadership and its signal has not aborted). */
  isLeader(name: string): boolean {
    return this.campaigns.get(name)?.leading === true;
  }

  /** This instance's current term of `name` (signal, term, since), while it leads it. */
  leadership(name: string): Leadership | undefined {
    return this.campaigns.get(name)?.leadership;
  }

  /**
   * Who leads `name` now as the store says, seen from any instance (campaigning or not): the
   * leader's instance label and term; `undefined` when nobody leads. One read of the store.
   */
  async leader(name: string): Promise<LeaderInfo | undefined> {
    checkName(name);
    const info = await this.engine.inspect(leadershipKey(name));
    const holder = info.holders.find((each) => !each.permit);
    if (!holder) return undefined;
    return {
      ...(holder.instance === undefined ? {} : { instance: holder.instance }),
      ...(holder.fence === undefined ? {} : { term: holder.fence }),
    };
  }

  /** This instance's leadership of `name`: the current state at once, then every change. Completes when the service closes. */
  leadership$(name: string): Observable<LeadershipChange> {
    checkName(name);
    return this.subject(name).pipe(distinctUntilChanged((a, b) => a.leader === b.leader && a.term === b.term));
  }

  /** Gives up the current term of `name`, if this instance leads it: the task's signal aborts, a follower takes over; the campaign goes on. */
  async resign(name: string): Promise<void> {
    checkName(name);
    await this.campaigns.get(name)?.resign();
  }

  /** Stops every campaign (leaders resign first). Called on application shutdown; without Nest, call it before the engine's `close()`. */
  async close(): Promise<void> {
    const campaigns = [...this.campaigns.values()];
    this.campaigns.clear();
    await Promise.all(campaigns.map((campaign) => campaign.stop()));
    for (const subject of this.changes.values()) subject.complete();
  }

  /** Nest shutdown hook: every leader resigns and every campaign stops before the store closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private subject(name: string): BehaviorSubject<LeadershipChange> {
    let subject = this.changes.get(name);
    if (!subject) this.changes.set(name, (subject = new BehaviorSubject<LeadershipChange>({ leader: false })));
    return subject;
  }

  private reporter(name: string): CampaignReporter {
    return {
      change: (change) => this.subject(name).next(change),
      taskFailed: (error) => this.logger.error(LeaderMessages.taskFailed(name, messageOf(error))),
      storeFailed: (error, retryInMs) =>
        this.logger.warn(LeaderMessages.storeFailed(name, messageOf(error), retryInMs)),
    };
  }
}

function checkName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0)
    throw new InvalidLockArgumentError(LeaderMessages.name(describe(name)));
  assertKey(leadershipKey(name));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
