import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { createLockBackend, LockEngine, type Lock } from '../../lib/index.js';
import { EtcdCluster, type EtcdMember } from '../harness/etcd-cluster.js';
import { FaultProxy } from '../nemesis/fault-proxy.js';
import { canIsolate, isolatePorts, PROXY_ADDRESS } from '../nemesis/port-isolation.js';
import { LatencyProxy } from '../faults/latency-proxy.js';

// The leader of a 3-member etcd cluster is cut off from the other two members (iptables) while a
// client holding a lock can still reach it, and only it: the client's connections to the other two
// are down for a moment (reset). The leader loses the quorum, the other two elect a new one, and
// the client releases its lock meanwhile: the release reaches no leader. It must be finished on the
// new leader once the client reaches it, so another client gets the lock then; not a lease TTL after
// the election (a new leader gives every lease a fresh TTL: a key whose release never landed and
// whose lease was given up outlives its holder by the election + the TTL).

const LEASE_TTL_MS = 3_000;
/** Short, so that a call that reaches no leader fails while the election is still going on. */
const REQUEST_TIMEOUT_MS = 1_000;
/** How long the holder reaches only the cut-off leader. */
const ATTACHED_MS = 1_500;
/**
 * Once the holder reaches the others again: its release lands on the new leader within a retry and
 * a call, and the next holder (asking again after each failed attempt, each up to the request
 * timeout) gets the lock within its next attempt.
 */
const AFTER_REACHABLE_MS = REQUEST_TIMEOUT_MS + 1_000;

const run = canIsolate() ? describe : describe.skip;

run('etcd: a holder attached to the leader when it loses the quorum', () => {
  let cluster: EtcdCluster;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    cluster = await EtcdCluster.start(3);
  }, 90_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster?.destroy();
  }, 30_000);

  async function engine(urls: readonly string[], keyPrefix: string): Promise<LockEngine> {
    const created = new LockEngine(
      await createLockBackend({
        type: 'etcd',
        urls: [...urls],
        leaseTtlMs: LEASE_TTL_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
      }),
      { keyPrefix },
    );
    closers.push(() => created.close());
    return created;
  }

  /** Polls the members other than `old` (whose id is `oldId`) until one names a new leader; resolves when (performance.now()). */
  async function newLeaderSeen(old: EtcdMember, oldId: string): Promise<number> {
    const others = cluster.members.filter((member) => member !== old);
    for (;;) {
      const statuses = await Promise.all(others.map((member) => member.status().catch(() => undefined)));
      if (statuses.some((status) => status && status.leader !== '0' && status.leader !== oldId))
        return performance.now();
      await delay(50);
    }
  }

  it('its release, sent when the partition begins, is finished on the new leader once the holder reaches it', async () => {
    await cluster.settled();
    const leader = await cluster.leader();
    const others = cluster.members.filter((member) => member !== leader);
    // The holder reaches the leader through a proxy the isolation lets through, the others through proxies that can reset it.
    const toLeader = await FaultProxy.start(leader.clientPort, undefined, PROXY_ADDRESS);
    const toOthers = await Promise.all(others.map((member) => LatencyProxy.start(member.clientPort, 0)));
    closers.push(() => toLeader.close(), ...toOthers.map((proxy) => () => proxy.close()));
    const keyPrefix = `leader-cut:${randomUUID().slice(0, 8)}:`;
    const holder = await engine(
      [toLeader, ...toOthers].map((proxy) => `http://127.0.0.1:${proxy.port}`),
      keyPrefix,
    );
    const next = await engine(
      others.map((member) => member.url),
      keyPrefix,
    );
    const lock: Lock = await holder.acquire('k');
    const leaderId = (await leader.status()).member;

    const heal = isolatePorts([leader.clientPort, leader.peerPort], { peersOnly: true, pid: leader.pid! });
    for (const proxy of toOthers) proxy.refuse();
    const cutAt = performance.now();
    try {
      const elected = newLeaderSeen(leader, leaderId);
      const released = lock.release().then(
        () => 'released',
        (error: Error) => error.name,
      );
      const reachable = delay(ATTACHED_MS).then(() => {
        for (const proxy of toOthers) proxy.admit();
        return performance.now();
      });
      // The next holder asks as an app does: again after a failed attempt (one that reaches no leader fails after requestTimeoutMs).
      let taken: Lock | undefined;
      let failed = 0;
      while (!taken) taken = await next.acquire('k', { waitMs: 20_000 }).catch(() => void failed++);
      const takenAt = performance.now();
      await taken.release();
      const [electedAt, reachableAt] = [await elected, await reachable];
      process.stdout.write(
        `etcd, leader cut off: new leader after ${Math.round(electedAt - cutAt)} ms, holder reaches it after ${Math.round(reachableAt - cutAt)} ms, ` +
          `next holder after ${Math.round(takenAt - cutAt)} ms (${failed} failed attempts); the holder's release: ${await released}\n`,
      );
      expect(takenAt - cutAt).toBeLessThan(Math.max(electedAt, reachableAt) - cutAt + AFTER_REACHABLE_MS);
      // The bound every case keeps: one election and one lease TTL.
      expect(takenAt - cutAt).toBeLessThan(electedAt - cutAt + LEASE_TTL_MS);
    } finally {
      heal();
    }
  }, 60_000);
});
