import { afterEach, describe, expect, it } from '@jest/globals';
import { firstValueFrom, filter, merge, take, toArray } from 'rxjs';
import {
  InvalidLockArgumentError,
  LeaderService,
  LockEngine,
  MemoryBackend,
  type Leadership,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';

/** Two instances of one app sharing one store: two engines on one memory backend. */
function twoInstances(): { backend: MemoryBackend; a: LeaderService; b: LeaderService; close(): Promise<void> } {
  const backend = new MemoryBackend();
  const engines = ['a', 'b'].map((instance) => new LockEngine(backend, { instance, leaseMs: 2_000 }));
  const [a, b] = engines.map((engine) => new LeaderService(engine));
  return {
    backend,
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await Promise.all(engines.map((engine) => engine.close()));
    },
  };
}

/** A task that records its terms and holds leadership until its signal aborts. */
function holdingTask(terms: Leadership[]): (leadership: Leadership) => Promise<void> {
  return (leadership) => {
    terms.push(leadership);
    return new Promise((resolve) => leadership.signal.addEventListener('abort', () => resolve(), { once: true }));
  };
}

const becomesLeader = (service: LeaderService, name: string) =>
  firstValueFrom(service.leadership$(name).pipe(filter((change) => change.leader)));

describe('LeaderService on a LockEngine (memory, two instances)', () => {
  let pair: ReturnType<typeof twoInstances>;
  afterEach(() => pair?.close());

  it('elects one leader, reports it from either instance, and hands over on resign with a larger term', async () => {
    pair = twoInstances();
    const termsA: Leadership[] = [];
    const termsB: Leadership[] = [];
    pair.a.lead('relay', holdingTask(termsA));
    await becomesLeader(pair.a, 'relay');
    pair.b.lead('relay', holdingTask(termsB));
    expect(pair.a.isLeader('relay')).toBe(true);
    expect(pair.b.isLeader('relay')).toBe(false);
    expect(await pair.b.leader('relay')).toEqual({ instance: 'a', term: termsA[0].term });
    expect(pair.a.leadership('relay')).toBe(termsA[0]);
    expect(termsA[0]).toMatchObject({ name: 'relay', term: expect.any(Number), since: expect.any(Number) });

    const bLeads = becomesLeader(pair.b, 'relay');
    await pair.a.resign('relay');
    expect(termsA[0].signal.aborted).toBe(true);
    expect(pair.a.isLeader('relay')).toBe(false);
    await bLeads;
    expect(termsB[0].term!).toBeGreaterThan(termsA[0].term!);
    expect(await pair.a.leader('relay')).toEqual({ instance: 'b', term: termsB[0].term });
  });

  it('leadership$ emits the current state, then each change', async () => {
    pair = twoInstances();
    const changes = firstValueFrom(pair.a.leadership$('watch').pipe(take(3), toArray()));
    const campaign = pair.a.lead('watch', holdingTask([]));
    await becomesLeader(pair.a, 'watch');
    await campaign.stop();
    expect(await changes).toEqual([{ leader: false }, { leader: true, term: expect.any(Number) }, { leader: false }]);
    expect(await pair.b.leader('watch')).toBeUndefined();
  });

  it('a task that returns resigns and campaigns again, or stops with afterTask: stop', async () => {
    pair = twoInstances();
    let runs = 0;
    const ran = new Promise<void>((resolve) =>
      pair.a.lead('once', () => void (++runs === 1 && resolve()), { afterTask: 'stop' }),
    );
    await ran;
    const terms: Leadership[] = [];
    pair.b.lead('once', holdingTask(terms));
    await becomesLeader(pair.b, 'once');
    expect(runs).toBe(1);

    let again = 0;
    const twice = new Promise<void>((resolve) => pair.a.lead('again', () => void (++again === 2 && resolve())));
    await twice;
    expect(again).toBe(2);
  });

  it('a lost leadership aborts the signal at once (reason LockLostError), and the instance campaigns again', async () => {
    pair = twoInstances();
    const terms: Leadership[] = [];
    pair.a.lead('lost', holdingTask(terms));
    await becomesLeader(pair.a, 'lost');
    const engineA = (pair.a as unknown as { engine: LockEngine }).engine;
    await engineA.forceRelease('leader:lost');
    expect(terms[0].signal.aborted).toBe(true);
    expect((terms[0].signal.reason as Error).name).toBe('LockLostError');
    expect(pair.a.isLeader('lost')).toBe(false);
    await firstValueFrom(
      pair.a.leadership$('lost').pipe(filter((change) => change.leader && change.term !== terms[0].term)),
    );
    expect(terms[1].term!).toBeGreaterThan(terms[0].term!);
  });

  it('a throwing task is logged, and the instance resigns so another can lead', async () => {
    pair = twoInstances();
    pair.a.lead('fails', () => {
      throw new Error('boom');
    });
    const terms: Leadership[] = [];
    pair.b.lead('fails', holdingTask(terms));
    await becomesLeader(pair.b, 'fails');
    expect(pair.b.isLeader('fails')).toBe(true);
  });

  it('three instances, random resigns: one believer at a time, terms increasing, leadership moving on', async () => {
    const backend = new MemoryBackend();
    const engines = ['x', 'y', 'z'].map((instance) => new LockEngine(backend, { instance, leaseMs: 2_000 }));
    const services = engines.map((engine) => new LeaderService(engine));
    const beliefs: { instance: string; term: number; start: bigint; end?: bigint }[] = [];
    for (const service of services) {
      service.lead('rotating', (leadership) => {
        const belief: (typeof beliefs)[number] = {
          instance: service.instance,
          term: leadership.term!,
          start: process.hrtime.bigint(),
        };
        beliefs.push(belief);
        return new Promise<void>((resolve) =>
          leadership.signal.addEventListener('abort', () => resolve(void (belief.end = process.hrtime.bigint())), {
            once: true,
          }),
        );
      });
    }
    for (let i = 0; i < 30; i++) {
      // Each service's leadership$ starts with its current state: resolves at once when one leads, else on the next election.
      await firstValueFrom(
        merge(...services.map((service) => service.leadership$('rotating'))).pipe(
          filter(() => services.some((service) => service.isLeader('rotating'))),
        ),
      );
      const leader = services.find((service) => service.isLeader('rotating'))!;
      if (Math.random() < 0.8) await leader.resign('rotating');
      else await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    }
    await Promise.all(services.map((service) => service.close()));
    await Promise.all(engines.map((engine) => engine.close()));
    const sorted = [...beliefs].sort((a, b) => (a.start < b.start ? -1 : 1));
    for (let i = 1; i < sorted.length; i++) {
      expect(sorted[i].start).toBeGreaterThanOrEqual(sorted[i - 1].end!);
      expect(sorted[i].term).toBeGreaterThan(sorted[i - 1].term);
    }
    expect(new Set(sorted.map((belief) => belief.instance)).size).toBe(3);
  });

  it('refuses bad input, a second campaign for one name, and the redlock backend', async () => {
    pair = twoInstances();
    const bad: [unknown[], RegExp][] = [
      [['', () => undefined], /non-empty string/],
      [[42, () => undefined], /non-empty string/],
      [['x', 'task'], /needs a task function/],
      [['x', () => undefined, null], /options must be an object/],
      [['x', () => undefined, { leaseMs: -1 }], /leaseMs/],
      [['x', () => undefined, { afterTask: 'later' }], /afterTask/],
    ];
    for (const [args, message] of bad) {
      expect(() => (pair.a.lead as (...a: unknown[]) => unknown)(...args)).toThrow(message);
    }
    const campaign = pair.a.lead('dup', () => undefined);
    expect(() => pair.a.lead('dup', () => undefined)).toThrow(/already campaigns/);
    await campaign.stop();
    pair.a.lead('dup', () => undefined);

    // Leadership needs fences the store vouches for: a store that does not declare them (Redlock, a custom one) is refused.
    for (const capabilities of [undefined, { minHold: true }, { fenced: false }]) {
      const unfenced = {
        name: 'custom',
        capabilities,
        claim: () => {
          throw new Error('unused');
        },
        close: async () => undefined,
      } as unknown as LockBackend;
      const bare = new LockEngine(unfenced);
      expect(() => new LeaderService(bare).lead('x', () => undefined)).toThrow(InvalidLockArgumentError);
      expect(() => new LeaderService(bare).lead('x', () => undefined)).toThrow(/does not declare fencing tokens/);
      await bare.close();
    }
    const { RedlockBackend } = await import('../../lib/backends/redlock/redlock-backend.js');
    const engine = new LockEngine(
      new RedlockBackend([], { quorum: 1 } as ConstructorParameters<typeof RedlockBackend>[1]),
    );
    expect(() => new LeaderService(engine).lead('x', () => undefined)).toThrow(
      /Leader election is refused on the redlock backend/,
    );
    await engine.close();
  });
});
