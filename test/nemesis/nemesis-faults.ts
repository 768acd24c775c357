import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HistoryEvent } from './checker.mjs';
import type { FaultProxy, ProxyMode } from './fault-proxy.js';
import { dropPort, undropPort } from './iptables.js';
import type { Act, NemesisClients } from './nemesis-clients.js';
import type { NemesisFault, NemesisOptions, NemesisStore } from './nemesis-runner.js';
import { now, sleep } from './nemesis-time.js';

/** What one round of a run works with. */
export interface Round {
  readonly store: NemesisStore;
  readonly fault: NemesisFault;
  readonly options: NemesisOptions;
  /** Each client's proxies, in the order of the store's endpoints. */
  readonly proxies: readonly (readonly FaultProxy[])[];
  readonly clients: NemesisClients;
  /** Appends to the history, timed now unless the event has its `time`. */
  readonly record: (event: Omit<HistoryEvent, 'time'> & { time?: number }) => void;
  /** The lock's key in the store. */
  readonly storeKey: string;
  /** How long this round's holder fault lasts. */
  readonly faultMs: number;
  /**
   * How long a holder fault waits, from its strike, for another client to write (the fault to bite):
   * the struck holder writes only after that, or after this long (then the row's canary check fails).
   */
  readonly biteLimitMs: number;
}

/** How a round ended: when the fault was healed, which client it cut off (if one), and what to await before the next round. */
export interface RoundEnd {
  readonly healedAt: number;
  readonly target?: number;
  readonly rejoin?: () => Promise<void>;
}

/** Injects `round.fault` once (see NemesisFault) and heals it. */
export async function injectFault(round: Round): Promise<RoundEnd> {
  const { store, fault, options, proxies, clients, record, storeKey, faultMs, biteLimitMs } = round;
  const cut = (index: number, mode: ProxyMode) => {
    for (const proxy of proxies[index]) proxy.setMode(mode);
  };
  /** Arms a holder fault at `point` and waits until a client reached it; resolves that client. */
  const strike = async (point: string, act: Act, only?: number): Promise<number> => {
    const target = await clients.strike(point, act, only);
    if (target === undefined)
      throw new Error(`no client reached the ${point} checkpoint within 30 s (${fault} on ${store.name})`);
    return target;
  };
  /** The struck holder `index` writes (passes checkpoint `point`) only once another client has: a newer holder's write precedes its stale one. */
  const biteAt = (index: number, point: string) =>
    clients.gate(index, point, clients.anotherWrites(index, biteLimitMs));
  switch (fault) {
    case 'partition tcp': {
      const target = await strike('after-acquire', (index) => {
        for (const proxy of proxies[index]) dropPort(proxy.port);
        record({ process: 'nemesis', type: 'event', f: 'partition', target: index, mode: 'iptables' });
        biteAt(index, 'before-write');
        return { holdMs: faultMs };
      });
      await sleep(faultMs);
      for (const proxy of proxies[target]) undropPort(proxy.port);
      record({ process: 'nemesis', type: 'event', f: 'heal', target });
      return { healedAt: now(), target };
    }
    case 'partition':
    case 'partition replies':
    case 'slow clock':
    case 'store clock fast': {
      const mode: ProxyMode = fault === 'partition replies' ? 'replies-dropped' : 'partitioned';
      const target = await strike(
        'after-acquire',
        (index) => {
          cut(index, mode);
          record({ process: 'nemesis', type: 'event', f: 'partition', target: index, mode });
          biteAt(index, 'before-write');
          return { holdMs: faultMs };
        },
        fault === 'slow clock' ? 0 : undefined,
      );
      await sleep(faultMs);
      cut(target, 'open');
      record({ process: 'nemesis', type: 'event', f: 'heal', target });
      return { healedAt: now(), target };
    }
    case 'partition shard': {
      // Only the holder's proxy to the lock key's master: the other shards (and their masters' slot maps) still answer it.
      if (!store.leaderEndpoint) throw new Error(`${store.name} has no shards`);
      const shard = await store.leaderEndpoint(storeKey);
      const target = await strike('after-acquire', (index) => {
        proxies[index][shard].setMode('partitioned');
        record({
          process: 'nemesis',
          type: 'event',
          f: 'partition',
          target: index,
          mode: 'partitioned',
          endpoint: store.endpoints[shard],
        });
        biteAt(index, 'before-write');
        return { holdMs: faultMs };
      });
      await sleep(faultMs);
      proxies[target][shard].setMode('open');
      record({ process: 'nemesis', type: 'event', f: 'heal', target });
      return { healedAt: now(), target };
    }
    case 'failover': {
      // Killed right after a grant there: the lock may not have reached a replica yet (asynchronous replication).
      if (!store.killLeader) throw new Error(`${store.name} has no replicas to fail over to`);
      let killed: Awaited<ReturnType<NonNullable<NemesisStore['killLeader']>>> | undefined;
      await strike('after-acquire', async (index) => {
        killed = await store.killLeader!(storeKey);
        record({ process: 'nemesis', type: 'event', f: 'kill-master', member: killed.member, holder: index });
        return {};
      });
      await killed!.promoted();
      record({ process: 'nemesis', type: 'event', f: 'promoted' });
      const healedAt = now();
      // Brought back at once, as a supervisor would: with `replicas`, the promoted master may have no other replica to acknowledge.
      const rejoined = killed!.rejoin().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
      const rejoin = async () => {
        const error = await rejoined;
        if (error) throw error;
      };
      return { healedAt, rejoin };
    }
    case 'pause after acquire':
    case 'pause before write': {
      const target = await strike(fault === 'pause after acquire' ? 'after-acquire' : 'before-write', (index) => {
        clients.signal(index, 'SIGSTOP');
        record({ process: 'nemesis', type: 'event', f: 'pause', target: index });
        biteAt(index, 'before-write');
        return {};
      });
      await sleep(faultMs);
      record({ process: 'nemesis', type: 'event', f: 'resume', target });
      clients.signal(target, 'SIGCONT');
      return { healedAt: now(), target };
    }
    case 'block loop': {
      // The blocked loop cannot hear a message: it polls for this file, which appears once the fault can bite.
      const resumeFile = join(tmpdir(), `nemesis-resume-${process.pid}-${Math.round(now())}`);
      let bitten!: Promise<boolean>;
      const target = await strike('before-write', (index) => {
        bitten = clients.anotherWrites(index, biteLimitMs);
        return { blockMs: biteLimitMs, resumeFile };
      });
      const [, bit] = await Promise.all([sleep(faultMs), bitten]);
      if (bit) writeFileSync(resumeFile, '');
      return { healedAt: now(), target };
    }
    case 'isolate leader from peers': {
      // A client that has just got the lock holds it through the isolation: its lock lives on the isolated leader.
      if (!store.isolateMember) throw new Error(`${store.name} has no members to isolate`);
      const isolationMs = options.faultMs ?? store.isolationMs ?? faultMs;
      let heal = () => undefined as void;
      await strike('after-acquire', async (index) => {
        const isolated = await store.isolateMember!('leader', { storeKey, peersOnly: true });
        heal = isolated.heal;
        record({
          process: 'nemesis',
          type: 'event',
          f: 'partition',
          member: isolated.member,
          mode: 'from peers',
          holder: index,
        });
        return { holdMs: isolationMs };
      });
      await sleep(isolationMs);
      heal();
      record({ process: 'nemesis', type: 'event', f: 'heal' });
      return { healedAt: now() };
    }
    case 'isolate leader':
    case 'isolate member': {
      if (!store.isolateMember) throw new Error(`${store.name} has no members to isolate`);
      const { member, heal, servingAgain } = await store.isolateMember(
        fault === 'isolate leader' ? 'leader' : await busiestEndpoint(store, proxies),
        { storeKey, peersOnly: false },
      );
      record({ process: 'nemesis', type: 'event', f: 'partition', member });
      const served = servingAgain?.then(
        (time) => time !== undefined && record({ process: 'nemesis', type: 'event', f: 'serving', member, time }),
      );
      await sleep(options.faultMs ?? store.isolationMs ?? faultMs);
      heal();
      record({ process: 'nemesis', type: 'event', f: 'heal', member });
      const healedAt = now();
      await served;
      return { healedAt };
    }
    case 'majorities ring': {
      const n = store.endpoints.length;
      const majority = Math.floor(n / 2) + 1;
      proxies.forEach((own, c) =>
        own.forEach((proxy, e) => (((e - 2 * c) % n) + n) % n >= majority && proxy.setMode('partitioned')),
      );
      record({ process: 'nemesis', type: 'event', f: 'partition', mode: 'majorities ring' });
      await sleep(faultMs);
      for (const proxy of proxies.flat()) proxy.setMode('open');
      record({ process: 'nemesis', type: 'event', f: 'heal' });
      return { healedAt: now() };
    }
    case 'restart store': {
      record({ process: 'nemesis', type: 'event', f: 'restart' });
      await store.restart();
      record({ process: 'nemesis', type: 'event', f: 'restarted' });
      return { healedAt: now() };
    }
  }
}

/** The endpoint whose proxies carried the most bytes over the next 500 ms. */
async function busiestEndpoint(store: NemesisStore, proxies: Round['proxies']): Promise<number> {
  const traffic = () => store.endpoints.map((_, e) => proxies.reduce((sum, own) => sum + own[e].bytes, 0));
  const before = traffic();
  await sleep(500);
  const delta = traffic().map((bytes, e) => bytes - before[e]);
  return delta.indexOf(Math.max(...delta));
}
