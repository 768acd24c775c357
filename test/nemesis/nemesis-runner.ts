import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendOptions } from '../../lib/index.js';
import { checkHistory, type CheckReport, type HistoryEvent } from './checker.mjs';
import { FaultProxy } from './fault-proxy.js';
import { undropPort } from './iptables.js';
import { NemesisClients } from './nemesis-clients.js';
import { injectFault } from './nemesis-faults.js';
import { now, sleep } from './nemesis-time.js';
import { WAIT_GRACE_MS, SLOW_CLOCK_RATE } from './row-checks.js';
import { findLibfaketime } from './row-plan.js';
import { seededRandom } from './seeded-random.js';
import { measureClockRate } from './store-clock.js';

/**
 * The faults. Holder faults hit the first client to reach the fault's checkpoint once it is armed:
 * `partition` and `partition replies` cut its proxies (both ways, or the store's replies only) and
 * keep it working (it holds on, then writes) until the heal; `partition tcp` drops its packets to
 * and from its proxies with iptables (root only), so that its kernel retransmits with back-off; `pause after acquire` and `pause
 * before write` SIGSTOP it there; `block loop` makes it block its event loop before writing;
 * `restart store` kills the store and starts it again; `failover` kills the lock key's master as
 * soon as a client got the lock there and waits for a replica's promotion (Redis Sentinel,
 * Cluster), then brings the old master back as a replica; `partition shard` cuts the holder off
 * from the lock key's master only (Redis Cluster: the other shards still answer it); `slow clock`
 * runs client 0 under libfaketime at {@link SLOW_CLOCK_RATE} and partitions it while it holds; `store clock fast`
 * partitions a holder as `partition` does, on a store whose servers run a fast clock (started so:
 * store-clock.ts); `isolate leader` cuts
 * the leader of a cluster off from its peers and its clients, `isolate member` the member the
 * clients talked to most in the last half second (clusters only); `isolate leader from peers` cuts
 * the leader off from its peers only, as soon as a client got the lock (that client holds on through
 * the isolation): the clients still reach it; `majorities ring` (several
 * independent masters: Redlock) cuts each client off from all but a majority of the masters, each
 * client's majority a different one, as Jepsen's majorities-ring nemesis does.
 */
export type NemesisFault =
  | 'partition'
  | 'partition replies'
  | 'partition tcp'
  | 'partition shard'
  | 'pause after acquire'
  | 'pause before write'
  | 'block loop'
  | 'restart store'
  | 'failover'
  | 'slow clock'
  | 'store clock fast'
  | 'isolate leader'
  | 'isolate member'
  | 'isolate leader from peers'
  | 'majorities ring';

export const ALL_NEMESIS_FAULTS: readonly NemesisFault[] = [
  'partition',
  'partition replies',
  'partition tcp',
  'pause after acquire',
  'pause before write',
  'block loop',
  'restart store',
  'slow clock',
];

/** One store as the nemesis runs it. */
export interface NemesisStore {
  readonly name: string;
  /** Ports of the store's client endpoints; every client gets a proxy of its own in front of each. */
  readonly endpoints: readonly number[];
  /** Backend options for a client that reaches the store through `ports` (its proxies, in the order of `endpoints`). */
  clientConfig(ports: readonly number[]): BackendOptions;
  readonly leaseMs: number;
  /** A holder cut off or stopped this long has surely lost its lock in the store (lease, session or TTL, plus its expiry sweep). */
  readonly lossMs: number;
  /** Kills the store and starts it again (what survives is the store's: see its setup). */
  restart(): Promise<void>;
  /** Whether the store gives fences (Redlock does not: its clients write only the canary). Default true. */
  readonly fenced?: boolean;
  /** SQL stores: the guarded counter is a row in this database behind SqlFenceGuard (reached directly, not through the proxies). */
  readonly sqlResource?: { dialect: 'postgres' | 'mysql'; url: string };
  /**
   * Clusters: cuts a member (the leader, or the one of `endpoints[index]`) off from its peers and
   * its clients (`peersOnly`: from its peers only); resolves its name and the heal. `storeKey`: the
   * lock's key in the store (keyPrefix + key), for a store whose leader depends on the key (Redis Cluster: the key's master).
   * `servingAgain`: resolves (runner's clock) when the members left serve clients again with a leader (at once, if the
   * isolated member was a follower), or undefined if they did not within 30 s.
   */
  isolateMember?(
    which: 'leader' | number,
    options: { storeKey: string; peersOnly: boolean },
  ): Promise<{ member: string; heal: () => void; servingAgain?: Promise<number | undefined> }>;
  /** Where the clients' proxies connect to each endpoint from (in the order of `endpoints`; default the system's choice: 127.0.0.1). */
  readonly proxyFrom?: readonly (string | undefined)[];
  /** How long a member stays isolated. */
  readonly isolationMs?: number;
  /** The rate of the store's servers' clocks (1: real time; see store-clock.ts). */
  readonly storeClockRate?: number;
  /** The server's clock now, in ms (to measure its rate under `store clock fast`). */
  serverClockMs?(): Promise<number>;
  /**
   * Clusters whose clients are given every member: the longest a member's isolation may leave the lock without a holder,
   * and why; `afterServing`: counted from when the members left serve again (isolateMember's `servingAgain`), not from the isolation.
   */
  readonly unavailableBound?: { readonly ms: number; readonly why: string; readonly afterServing?: boolean };
  /** Added by every proxy, each way (a store on another machine). */
  readonly latencyMs?: number;
  /** Replicated Redis: SIGKILLs the master of `storeKey`; `promoted` resolves when a replica serves in its place, `rejoin` brings the killed node back as a replica, in sync. */
  killLeader?(
    storeKey: string,
  ): Promise<{ member: string; promoted: () => Promise<void>; rejoin: () => Promise<void> }>;
  /** Redis Cluster: the index in `endpoints` of the master that serves `storeKey`. */
  leaderEndpoint?(storeKey: string): Promise<number>;
}

export interface NemesisOptions {
  readonly seed: number;
  /** Faults injected one after the other in this run. */
  readonly rounds: number;
  /** URL of the built package's ESM directory (ending in `/`). */
  readonly dist: string;
  /** The resource Redis (not behind the proxies: a cut-off holder still reaches it). */
  readonly resourceUrl: string;
  /** How long a holder fault lasts; default: the store's lossMs x 1.2-1.7 (seeded). */
  readonly faultMs?: number;
  readonly clients?: number;
  /** After a heal, how long the run waits for the cut-off client to acquire again before the next round. Default 20 s. */
  readonly recoveryLimitMs?: number;
  /** Where the history goes (a JSON file per run). */
  readonly outDir?: string;
}

export interface NemesisRun {
  readonly store: string;
  readonly fault: NemesisFault;
  readonly seed: number;
  readonly file: string;
  readonly report: CheckReport;
  readonly seconds: number;
  /** `slow clock`: the slow client's clocks against the runner's, over the run. */
  readonly clientClockRate?: number;
  /** Isolations of a store that reports it: the longest the members left took to serve again with a leader (null: one never did). */
  readonly servingAgainMs?: number | null;
  /** `store clock fast`: the store's server clock against the runner's, before the run. */
  readonly storeClockRate?: number;
}

/** After each heal, the run waits for this many acquisitions (the lock works again) before the next round, at most RECOVERY_LIMIT_MS. */
const ACQUISITIONS_AFTER_HEAL = 5;

/** Runs `rounds` injections of `fault` against 3 clients of `store`; writes the history and resolves its check. */
export async function runNemesis(
  store: NemesisStore,
  fault: NemesisFault,
  options: NemesisOptions,
): Promise<NemesisRun> {
  const startedAt = now();
  const random = seededRandom(options.seed);
  const clients = options.clients ?? 3;
  const runId = `${store.name}-${fault.replace(/\s+/g, '-')}-${options.seed}`;
  const events: HistoryEvent[] = [];
  const record = (event: Omit<HistoryEvent, 'time'> & { time?: number }) =>
    events.push({ ...event, time: event.time ?? now() } as HistoryEvent);
  // The row means something only if the server's clock does run fast.
  const storeClockRate = store.storeClockRate !== undefined ? await measureClockRate(store) : undefined;
  const proxies = await Promise.all(
    Array.from({ length: clients }, () =>
      Promise.all(
        store.endpoints.map((port, e) => FaultProxy.start(port, undefined, store.proxyFrom?.[e], store.latencyMs)),
      ),
    ),
  );
  const prefix = `nemesis:${runId}:${Date.now()}:`;
  const storeKey = `${prefix}nemesis`;
  const clientProcesses = new NemesisClients(
    proxies.map((own, index) => {
      const slow = fault === 'slow clock' && index === 0;
      const config = {
        dist: options.dist,
        backend: store.clientConfig(own.map((proxy) => proxy.port)),
        key: 'nemesis',
        keyPrefix: prefix,
        leaseMs: store.leaseMs,
        waitMs: 2 * store.lossMs,
        waitBoundMs: 2 * store.lossMs + WAIT_GRACE_MS,
        resourceUrl: options.resourceUrl,
        resourcePrefix: prefix,
        holdMs: [0, 30],
        seed: Math.floor(random() * 2 ** 32),
        stamp: !slow,
        index,
        sql: store.sqlResource,
      };
      return {
        config,
        env: slow ? { ...process.env, LD_PRELOAD: libfaketime(), FAKETIME: `+0 x${SLOW_CLOCK_RATE}` } : process.env,
      };
    }),
    (event) => events.push(event),
  );

  const acquisitionsSince = (time: number, who?: number) =>
    events.filter(
      (e) => e.f === 'acquire' && e.type === 'ok' && e.time >= time && (who === undefined || e.process === who),
    ).length;
  const until = async (check: () => boolean, ms: number) => {
    for (const deadline = now() + ms; !check() && now() < deadline;) await sleep(20);
    return check();
  };

  let failure: unknown;
  let clientClockRate: number | undefined;
  try {
    await clientProcesses.ready();
    const slowClockFrom = fault === 'slow clock' ? await clientProcesses.readClock(0) : undefined;
    clientProcesses.go();
    for (let round = 0; round < options.rounds; round++) {
      await sleep(300 + random() * 700);
      const faultMs = options.faultMs ?? Math.round(store.lossMs * (1.2 + random() * 0.5));
      const { healedAt, target, rejoin } = await injectFault({
        store,
        fault,
        options,
        proxies,
        clients: clientProcesses,
        record,
        storeKey,
        faultMs,
        // Past the fault, a waiter's whole wait (2 x the loss time) and a second: what a newer holder takes at most to write.
        biteLimitMs: faultMs + 2 * store.lossMs + 1_000,
      });
      await until(
        () =>
          acquisitionsSince(healedAt) >= ACQUISITIONS_AFTER_HEAL &&
          (target === undefined || acquisitionsSince(healedAt, target) > 0),
        options.recoveryLimitMs ?? 20_000,
      );
      // The next round starts from a whole deployment again.
      await rejoin?.();
    }
    if (slowClockFrom) {
      const to = await clientProcesses.readClock(0);
      clientClockRate = (to.client - slowClockFrom.client) / (to.real - slowClockFrom.real);
    }
  } catch (error) {
    failure = error;
  } finally {
    await clientProcesses.stop();
    for (const proxy of proxies.flat()) undropPort(proxy.port);
    await Promise.all(proxies.flat().map((proxy) => proxy.close()));
  }
  const history = {
    meta: {
      store: store.name,
      fault,
      guard: store.sqlResource ? 'SqlFenceGuard' : 'RedisFenceGuard',
      seed: options.seed,
      rounds: options.rounds,
      leaseMs: store.leaseMs,
      waitMs: 2 * store.lossMs,
      lossMs: store.lossMs,
      latencyMs: store.latencyMs ?? 0,
      storeClockRate: store.storeClockRate ?? 1,
      clients,
      faultMs: options.faultMs ?? null,
    },
    events,
  };
  const outDir = options.outDir ?? '.test-results/nemesis';
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${runId}.json`);
  writeFileSync(file, JSON.stringify(history));
  failure ??= clientProcesses.crashes.length > 0 ? new Error(clientProcesses.crashes.join('; ')) : undefined;
  if (failure)
    throw new Error(
      `${String((failure as Error).message ?? failure)} (history: ${file}; clients' stderr: ${clientProcesses.stderr()})`,
      { cause: failure },
    );
  return {
    store: store.name,
    fault,
    seed: options.seed,
    file,
    report: checkHistory(history),
    servingAgainMs: longestUntilServing(events),
    seconds: Math.round((now() - startedAt) / 100) / 10,
    clientClockRate,
    storeClockRate,
  };
}

/** libfaketime's path; throws if it is not installed (row-plan.ts skips the rows that need it). */
function libfaketime(): string {
  const path = findLibfaketime();
  if (!path) throw new Error('libfaketime is not installed (Debian package faketime)');
  return path;
}

/** Over every isolation of the history, the longest from it to its `serving` event; null if one has none; undefined without any. */
function longestUntilServing(events: readonly HistoryEvent[]): number | null | undefined {
  if (!events.some((e) => e.f === 'serving')) return undefined;
  let longest = 0;
  for (const isolation of events.filter((e) => e.process === 'nemesis' && e.f === 'partition')) {
    const serving = events.find((e) => e.f === 'serving' && e.time >= isolation.time);
    if (!serving) return null;
    longest = Math.max(longest, serving.time - isolation.time);
  }
  return longest;
}
