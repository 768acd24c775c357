import { afterEach, describe, expect, it } from '@jest/globals';
import { LeaseKeeper } from '../../lib/backends/etcd/etcd-lease.js';
import { MemberHealth, MemberSkippedError, type MemberPolicy } from '../../lib/backends/etcd/etcd-member-health.js';

/** A call that goes unanswered, as etcd3 rejects one (deadline exceeded, member unreachable). */
class Unanswered extends Error {}
const isUnanswered = (error: unknown) => error instanceof Unanswered;

/** Member probes the test answers by hand: `answer(host)` lets the next probe of `host` succeed. */
function manualProbes() {
  const probed: string[] = [];
  const answering = new Set<string>();
  const probe = (host: string) => {
    probed.push(host);
    return answering.has(host) ? Promise.resolve() : Promise.reject(new Unanswered());
  };
  return { probe, probed, answer: (host: string) => answering.add(host) };
}

const unanswered = () => Promise.reject(new Unanswered());
const answered = () => Promise.resolve('ok');

describe('etcd member health: a member that went unanswered is passed over until it answers a probe', () => {
  let health: MemberHealth | undefined;
  afterEach(() => health?.close());

  function cluster(hosts: string[]) {
    const probes = manualProbes();
    health = new MemberHealth(isUnanswered, probes.probe);
    const members = Object.fromEntries(hosts.map((host) => [host, health!.member(host)])) as Record<
      string,
      MemberPolicy
    >;
    return { health, members, probes };
  }

  /** Resolves once `condition` holds, checking after each probe round (probes run every 100 ms). */
  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  it('passes a down member over while another is up, and takes it back only once a probe answers, however long that takes', async () => {
    const { members, probes } = cluster(['a', 'b', 'c']);
    await expect(members.a.execute(unanswered)).rejects.toBeInstanceOf(Unanswered);
    expect(members.a.down).toBe(true);
    await expect(members.a.execute(answered)).rejects.toBeInstanceOf(MemberSkippedError);
    await expect(members.b.execute(answered)).resolves.toBe('ok');
    // Probed again and again while it does not answer: still passed over after several rounds.
    await until(() => probes.probed.filter((host) => host === 'a').length >= 3);
    await expect(members.a.execute(answered)).rejects.toBeInstanceOf(MemberSkippedError);
    probes.answer('a');
    await until(() => !members.a.down);
    await expect(members.a.execute(answered)).resolves.toBe('ok');
  });

  it('a call that failed with an answer (an error etcd gave) does not take the member down', async () => {
    const { members, probes } = cluster(['a', 'b']);
    await expect(members.a.execute(() => Promise.reject(new Error('etcdserver: key not found')))).rejects.toThrow(
      'key not found',
    );
    expect(members.a.down).toBe(false);
    expect(probes.probed).toEqual([]);
  });

  it('with every member down, the one that answered last goes first, and a call waits for the first to answer a probe', async () => {
    const { health, members, probes } = cluster(['a', 'b', 'c']);
    // c answered most recently before everything went quiet: a leader lost, the rest electing.
    await members.c.execute(answered);
    for (const host of ['a', 'b', 'c'])
      await expect(members[host].execute(unanswered)).rejects.toBeInstanceOf(Unanswered);
    expect(health.allDown).toBe(true);
    await expect(members.a.execute(answered)).rejects.toBeInstanceOf(MemberSkippedError);
    await expect(members.b.execute(answered)).rejects.toBeInstanceOf(MemberSkippedError);
    await expect(members.c.execute(answered)).resolves.toBe('ok');
    await expect(members.c.execute(unanswered)).rejects.toBeInstanceOf(Unanswered);

    let waited = false;
    const wait = health.waitForUp(60_000).then(() => (waited = true));
    await until(() => probes.probed.length >= 6);
    expect(waited).toBe(false);
    probes.answer('b');
    await wait;
    expect(members.b.down).toBe(false);
    expect(health.allDown).toBe(false);
  });

  it('waiting for a member to come up ends at its time limit, and at once when the client closes', async () => {
    const { health, members } = cluster(['a', 'b']);
    for (const host of ['a', 'b']) await expect(members[host].execute(unanswered)).rejects.toBeInstanceOf(Unanswered);
    const started = performance.now();
    await health.waitForUp(150);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    const longWait = health.waitForUp(60_000);
    health.close();
    await longWait;
  });

  it('a single member is never passed over: it has nowhere else to go', async () => {
    const { health, members, probes } = cluster(['only']);
    await expect(members.only.execute(unanswered)).rejects.toBeInstanceOf(Unanswered);
    expect(members.only.down).toBe(false);
    expect(health.allDown).toBe(false);
    await expect(members.only.execute(answered)).resolves.toBe('ok');
    expect(probes.probed).toEqual([]);
  });

  it('cancels the streams open to a member when it goes down (etcd3 opens them again on another member)', async () => {
    const { members } = cluster(['a', 'b']);
    let cancelled = 0;
    const stream = { cancel: () => cancelled++, once: () => undefined };
    await members.a.execute(() => stream);
    expect(cancelled).toBe(0);
    await expect(members.a.execute(unanswered)).rejects.toBeInstanceOf(Unanswered);
    expect(cancelled).toBe(1);
  });

  it('a silent watch has every member probed once, and resolves once they answered or failed: one that does not answer is down, its streams moved', async () => {
    const { health, members, probes } = cluster(['a', 'b', 'c']);
    const cancelled: string[] = [];
    const streamOn = (host: string) => ({ cancel: () => cancelled.push(host), once: () => undefined });
    await members.a.execute(() => streamOn('a'));
    await members.b.execute(() => streamOn('b'));
    probes.answer('b');
    probes.answer('c');
    const checked = health.checkMembers();
    // A second silent watch while the probes are on their way shares them.
    const again = health.checkMembers();
    await checked;
    // Resolved only once the member that did not answer is down: the waiter's next look passes it over.
    expect(members.a.down).toBe(true);
    expect(cancelled).toEqual(['a']);
    expect(members.b.down).toBe(false);
    expect(members.c.down).toBe(false);
    await again;
    // c holds no stream, and is probed too: the waiter's next stream may land on it.
    expect(probes.probed.slice(0, 3).sort()).toEqual(['a', 'b', 'c']);
    // A third silent watch right after: b and c answered less than 100 ms ago, and are not probed again.
    await health.checkMembers();
    expect(probes.probed.filter((host) => host !== 'a')).toEqual(['b', 'c']);
    await expect(members.a.execute(answered)).rejects.toBeInstanceOf(MemberSkippedError);
    // a, down, is then probed until it answers, as any member that is down.
    probes.answer('a');
    await until(() => !members.a.down);
  });

  it('a silent watch on a single member probes nothing: there is nowhere else to move its stream', async () => {
    const { health, members, probes } = cluster(['only']);
    await members.only.execute(() => ({ cancel: () => undefined, once: () => undefined }));
    // A probe would be sent within the call: none was.
    await health.checkMembers();
    expect(probes.probed).toEqual([]);
  });
});

describe('etcd lease: a dropped lease is revoked, tried again while the revoke goes unanswered', () => {
  /** A fake etcd3 lease whose revokes answer as `answers` says, in turn (the last one repeats). */
  function fakeClient(answers: ('unanswered' | 'refused' | 'ok')[]) {
    const revokes: number[] = [];
    let settled!: () => void;
    const done = new Promise<void>((resolve) => (settled = resolve));
    const lease = {
      on: () => undefined,
      grant: () => Promise.resolve('7'),
      keepaliveOnce: () => Promise.resolve(),
      revoke: () => {
        const answer = answers[Math.min(revokes.length, answers.length - 1)];
        revokes.push(performance.now());
        if (answer === 'ok') {
          settled();
          return Promise.resolve();
        }
        if (answer === 'refused') settled();
        return Promise.reject(
          answer === 'unanswered' ? new Unanswered() : new Error('etcdserver: requested lease not found'),
        );
      },
    };
    return { client: { lease: () => lease } as never, revokes, done };
  }

  it('tries a revoke that went unanswered again until etcd answers it', async () => {
    const { client, revokes, done } = fakeClient(['unanswered', 'unanswered', 'ok']);
    const keeper = new LeaseKeeper(client, 2, 1_000, 1_000, isUnanswered);
    keeper.drop(await keeper.get(), 'etcd unreachable');
    await done;
    expect(revokes).toHaveLength(3);
    await keeper.close();
  });

  it('does not try again a revoke etcd refused (the lease is gone already)', async () => {
    const { client, revokes, done } = fakeClient(['refused']);
    const keeper = new LeaseKeeper(client, 2, 1_000, 1_000, isUnanswered);
    keeper.drop(await keeper.get(), 'etcd unreachable');
    await done;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(revokes).toHaveLength(1);
    await keeper.close();
  });
});
