import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BackendOptions } from '../../lib/index.js';
import { checkHistory, type CheckReport, type HistoryEvent } from './checker.mjs';
import { FaultProxy, type ProxyMode } from './fault-proxy.js';
import { dropPort, undropPort } from './iptables.js';
import { WAIT_GRACE_MS, SLOW_CLOCK_RATE } from './row-checks.js';
import { findLibfaketime } from './row-plan.js';
import { seededRandom } from './seeded-random.js';
import { measureClockRate } from './store-clock.js';

const WORKER = fileURLToPath(new URL('./nemesis-worker.mjs', import.meta.url));

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
export type NemesisFault = 'partition' | 'partition replies' | 'partition tcp' | 'partition shard' | 'pause after acquire' | 'pause before write' | 'block loop' | 'restart store' | 'failover' | 'slow clock' | 'store clock fast' | 'isolate leader' | 'isolate member' | 'isolate leader from peers' | 'majorities ring';

export const ALL_NEMESIS_FAULTS: readonly NemesisFault[] = ['partition', 'partition replies', 'partition tcp', 'pause after acquire', 'pause before write', 'block loop', 'restart store', 'slow clock'];

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
   */
  isolateMember?(which: 'leader' | number, options: { storeKey: string; peersOnly: boolean }): Promise<{ member: string; heal(): void }>;
  /** Where the clients' proxies connect to each endpoint from (in the order of `endpoints`; default the system's choice: 127.0.0.1). */
  readonly proxyFrom?: readonly (string | undefined)[];
  /** How long a member stays isolated. */
  readonly isolationMs?: number;
  /** The rate of the store's servers' clocks (1: real time; see store-clock.ts). */
  readonly storeClockRate?: number;
  /** The server's clock now, in ms (to measure its rate under `store clock fast`). */
  serverClockMs?(): Promise<number>;
  /** Clusters whose clients are given every member: the longest a member's isolation may leave the lock without a holder, and why. */
  readonly unavailableBound?: { readonly ms: number; readonly why: string };
  /** Added by every proxy, each way (a store on another machine). */
  readonly latencyMs?: number;
  /** Replicated Redis: SIGKILLs the master of `storeKey`; `promoted` resolves when a replica serves in its place, `rejoin` brings the killed node back as a replica, in sync. */
  killLeader?(storeKey: string): Promise<{ member: string; promoted(): Promise<void>; rejoin(): Promise<void> }>;
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
  /** `store clock fast`: the store's server clock against the runner's, before the run. */
  readonly storeClockRate?: number;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`'s value, or `fallback` after `ms`; the timer is cleared either way (a pending one keeps jest from exiting). */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
/** After each heal, the run waits for this many acquisitions (the lock works again) before the next round, at most RECOVERY_LIMIT_MS. */
const ACQUISITIONS_AFTER_HEAL = 5;

/** Runs `rounds` injections of `fault` against 3 clients of `store`; writes the history and resolves its check. */
export async function runNemesis(store: NemesisStore, fault: NemesisFault, options: NemesisOptions): Promise<NemesisRun> {
  const startedAt = now();
  const random = seededRandom(options.seed);
  const clients = options.clients ?? 3;
  const runId = `${store.name}-${fault.replace(/\s+/g, '-')}-${options.seed}`;
  const events: HistoryEvent[] = [];
  const record = (event: Omit<HistoryEvent, 'time'> & { time?: number }) => events.push({ ...event, time: event.time ?? now() } as HistoryEvent);
  // The row means something only if the server's clock does run fast.
  const storeClockRate = store.storeClockRate !== undefined ? await measureClockRate(store) : undefined;
  const proxies = await Promise.all(Array.from({ length: clients }, () => Promise.all(store.endpoints.map((port, e) => FaultProxy.start(port, { localAddress: store.proxyFrom?.[e], latencyMs: store.latencyMs })))));
  const children: ChildProcess[] = [];
  let armed: { point: string; only?: number; act: (index: number) => Promise<Record<string, unknown>> } | undefined;
  let hit: ((index: number) => void) | undefined;

  /** Set once the run stops its clients: an exit before is a crash. */
  let stopping = false;
  const crashed: string[] = [];
  const prefix = `nemesis:${runId}:${Date.now()}:`;
  const storeKey = `${prefix}nemesis`;
  const clockReadings = new Map<number, (message: Record<string, unknown>) => void>();
  const exits = proxies.map((own, index) => {
    const slow = fault === 'slow clock' && index === 0;
    const config = {
      dist: options.dist, backend: store.clientConfig(own.map((proxy) => proxy.port)), key: 'nemesis', keyPrefix: prefix,
      leaseMs: store.leaseMs, waitMs: 2 * store.lossMs, waitBoundMs: 2 * store.lossMs + WAIT_GRACE_MS, resourceUrl: options.resourceUrl, resourcePrefix: prefix,
      holdMs: [0, 30], seed: Math.floor(random() * 2 ** 32), stamp: !slow, index, sql: store.sqlResource,
    };
    const env = slow ? { ...process.env, LD_PRELOAD: libfaketime(), FAKETIME: `+0 x${SLOW_CLOCK_RATE}` } : process.env;
    const child = fork(WORKER, [JSON.stringify(config)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Record<string, unknown>) => {
        if (message.event === 'ready') return resolve();
        if (message.event === 'history') {
          const entry = message.entry as Partial<HistoryEvent>;
          return void record({ ...entry, process: entry.process ?? index, time: entry.time ?? now() } as HistoryEvent);
        }
        if (message.event === 'clock') return void clockReadings.get(message.id as number)?.(message);
        if (message.op === 'checkpoint') void checkpoint(child, index, message);
      });
      child.once('exit', (code) => reject(new Error(`nemesis client exited before ready (${code}): ${stderr}`)));
    });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        record({ process: index, type: 'event', f: 'exit', code, signal });
        // A client that dies mid-run would end its holds early and hide what it did: the run fails.
        if (!stopping) crashed.push(`client ${index} exited (${code ?? signal}) before the run ended: ${stderr.slice(-3_000)}`);
        resolve();
      }),
    );
    return { ready, exited, stderr: () => stderr };
  });

  async function checkpoint(child: ChildProcess, index: number, message: Record<string, unknown>): Promise<void> {
    const reply = (payload: Record<string, unknown>) => child.connected && child.send({ reply: message.id, ...payload }, () => undefined);
    const action = armed;
    if (!action || action.point !== message.point || (action.only !== undefined && action.only !== index)) return void reply({});
    armed = undefined;
    const payload = await action.act(index);
    hit?.(index);
    reply(payload);
  }

  const cut = (index: number, mode: ProxyMode) => {
    for (const proxy of proxies[index]!) proxy.setMode(mode);
  };
  const acquisitionsSince = (time: number, who?: number) => events.filter((e) => e.f === 'acquire' && e.type === 'ok' && e.time >= time && (who === undefined || e.process === who)).length;
  const until = async (check: () => boolean, ms: number) => {
    for (const deadline = now() + ms; !check() && now() < deadline; ) await sleep(20);
    return check();
  };

  /** Arms a holder fault at `point` and waits until a client reached it; resolves that client. */
  const strike = async (point: string, act: (index: number) => Promise<Record<string, unknown>>, only?: number): Promise<number> => {
    const reached = new Promise<number>((resolve) => (hit = resolve));
    armed = { point, only, act };
    const target = await within(reached, 30_000, -1);
    if (target < 0) throw new Error(`no client reached the ${point} checkpoint within 30 s (${fault} on ${store.name})`);
    return target;
  };

  /** Client `index`'s monotonic clock against ours: of three readings, the one with the shortest round trip, timed at its midpoint. */
  let nextReading = 0;
  const readClock = async (index: number) => {
    let best: { client: number; real: number; roundTrip: number } | undefined;
    for (let i = 0; i < 3; i++) {
      const id = nextReading++;
      const before = now();
      const reply = await within(new Promise<Record<string, unknown>>((resolve) => (clockReadings.set(id, resolve), children[index]!.send({ cmd: 'clock', id }))), 5_000, undefined);
      clockReadings.delete(id);
      const after = now();
      if (!reply) throw new Error(`client ${index} did not answer a clock reading within 5 s`);
      if (!best || after - before < best.roundTrip) best = { client: Number(reply.monotonic), real: (before + after) / 2, roundTrip: after - before };
    }
    return best!;
  };

  /** The endpoint whose proxies carried the most bytes over the next 500 ms. */
  const busiestEndpoint = async (): Promise<number> => {
    const traffic = () => store.endpoints.map((_, e) => proxies.reduce((sum, own) => sum + own[e]!.bytes, 0));
    const before = traffic();
    await sleep(500);
    const delta = traffic().map((bytes, e) => bytes - before[e]!);
    return delta.indexOf(Math.max(...delta));
  };

  let failure: unknown;
  let clientClockRate: number | undefined;
  try {
    await Promise.all(exits.map((e) => e.ready));
    const slowClockFrom = fault === 'slow clock' ? await readClock(0) : undefined;
    for (const child of children) child.send({ cmd: 'go' });
    let rejoin: (() => Promise<void>) | undefined;
    for (let round = 0; round < options.rounds; round++) {
      await sleep(300 + random() * 700);
      const faultMs = options.faultMs ?? Math.round(store.lossMs * (1.2 + random() * 0.5));
      let healedAt: number;
      let target: number | undefined;
      switch (fault) {
        case 'partition tcp': {
          target = await strike('after-acquire', async (index) => {
            for (const proxy of proxies[index]!) dropPort(proxy.port);
            record({ process: 'nemesis', type: 'event', f: 'partition', target: index, mode: 'iptables' });
            return { holdMs: faultMs };
          });
          await sleep(faultMs);
          for (const proxy of proxies[target]!) undropPort(proxy.port);
          record({ process: 'nemesis', type: 'event', f: 'heal', target });
          healedAt = now();
          break;
        }
        case 'partition':
        case 'partition replies':
        case 'slow clock':
        case 'store clock fast': {
          const mode: ProxyMode = fault === 'partition replies' ? 'replies-dropped' : 'partitioned';
          target = await strike('after-acquire', async (index) => {
            cut(index, mode);
            record({ process: 'nemesis', type: 'event', f: 'partition', target: index, mode });
            return { holdMs: faultMs };
          }, fault === 'slow clock' ? 0 : undefined);
          await sleep(faultMs);
          cut(target, 'open');
          record({ process: 'nemesis', type: 'event', f: 'heal', target });
          healedAt = now();
          break;
        }
        case 'partition shard': {
          // Only the holder's proxy to the lock key's master: the other shards (and their masters' slot maps) still answer it.
          if (!store.leaderEndpoint) throw new Error(`${store.name} has no shards`);
          const shard = await store.leaderEndpoint(storeKey);
          target = await strike('after-acquire', async (index) => {
            proxies[index]![shard]!.setMode('partitioned');
            record({ process: 'nemesis', type: 'event', f: 'partition', target: index, mode: 'partitioned', endpoint: store.endpoints[shard] });
            return { holdMs: faultMs };
          });
          await sleep(faultMs);
          proxies[target]![shard]!.setMode('open');
          record({ process: 'nemesis', type: 'event', f: 'heal', target });
          healedAt = now();
          break;
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
          healedAt = now();
          // Brought back at once, as a supervisor would: with `replicas`, the promoted master may have no other replica to acknowledge.
          const rejoined = killed!.rejoin().then(() => undefined, (error: unknown) => error);
          rejoin = async () => {
            const error = await rejoined;
            if (error) throw error;
          };
          break;
        }
        case 'pause after acquire':
        case 'pause before write': {
          target = await strike(fault === 'pause after acquire' ? 'after-acquire' : 'before-write', async (index) => {
            children[index]!.kill('SIGSTOP');
            record({ process: 'nemesis', type: 'event', f: 'pause', target: index });
            return {};
          });
          await sleep(faultMs);
          record({ process: 'nemesis', type: 'event', f: 'resume', target });
          children[target]!.kill('SIGCONT');
          healedAt = now();
          break;
        }
        case 'block loop': {
          target = await strike('before-write', async () => ({ blockMs: faultMs }));
          await sleep(faultMs);
          healedAt = now();
          break;
        }
        case 'isolate leader from peers': {
          // A client that has just got the lock holds it through the isolation: its lock lives on the isolated leader.
          if (!store.isolateMember) throw new Error(`${store.name} has no members to isolate`);
          const isolationMs = options.faultMs ?? store.isolationMs ?? faultMs;
          let heal = () => undefined as void;
          await strike('after-acquire', async (index) => {
            const isolated = await store.isolateMember!('leader', { storeKey, peersOnly: true });
            heal = isolated.heal;
            record({ process: 'nemesis', type: 'event', f: 'partition', member: isolated.member, mode: 'from peers', holder: index });
            return { holdMs: isolationMs };
          });
          await sleep(isolationMs);
          heal();
          record({ process: 'nemesis', type: 'event', f: 'heal' });
          healedAt = now();
          break;
        }
        case 'isolate leader':
        case 'isolate member': {
          if (!store.isolateMember) throw new Error(`${store.name} has no members to isolate`);
          const { member, heal } = await store.isolateMember(fault === 'isolate leader' ? 'leader' : await busiestEndpoint(), { storeKey, peersOnly: false });
          record({ process: 'nemesis', type: 'event', f: 'partition', member });
          await sleep(options.faultMs ?? store.isolationMs ?? faultMs);
          heal();
          record({ process: 'nemesis', type: 'event', f: 'heal', member });
          healedAt = now();
          break;
        }
        case 'majorities ring': {
          const n = store.endpoints.length;
          const majority = Math.floor(n / 2) + 1;
          proxies.forEach((own, c) => own.forEach((proxy, e) => ((e - 2 * c) % n + n) % n >= majority && proxy.setMode('partitioned')));
          record({ process: 'nemesis', type: 'event', f: 'partition', mode: 'majorities ring' });
          await sleep(faultMs);
          for (const proxy of proxies.flat()) proxy.setMode('open');
          record({ process: 'nemesis', type: 'event', f: 'heal' });
          healedAt = now();
          break;
        }
        case 'restart store': {
          record({ process: 'nemesis', type: 'event', f: 'restart' });
          await store.restart();
          record({ process: 'nemesis', type: 'event', f: 'restarted' });
          healedAt = now();
          break;
        }
      }
      await until(() => acquisitionsSince(healedAt) >= ACQUISITIONS_AFTER_HEAL && (target === undefined || acquisitionsSince(healedAt, target) > 0), options.recoveryLimitMs ?? 20_000);
      // The next round starts from a whole deployment again.
      await rejoin?.();
      rejoin = undefined;
    }
    if (slowClockFrom) {
      const to = await readClock(0);
      clientClockRate = (to.client - slowClockFrom.client) / (to.real - slowClockFrom.real);
    }
  } catch (error) {
    failure = error;
  } finally {
    stopping = true;
    for (const child of children) {
      child.kill('SIGCONT');
      if (child.connected) child.send({ cmd: 'stop' }, () => undefined);
    }
    await within(Promise.all(exits.map((e) => e.exited)), 20_000, undefined);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const proxy of proxies.flat()) undropPort(proxy.port);
    await Promise.all(proxies.flat().map((proxy) => proxy.close()));
  }
  const history = { meta: { store: store.name, fault, guard: store.sqlResource ? 'SqlFenceGuard' : 'RedisFenceGuard', seed: options.seed, rounds: options.rounds, leaseMs: store.leaseMs, waitMs: 2 * store.lossMs, lossMs: store.lossMs, latencyMs: store.latencyMs ?? 0, storeClockRate: store.storeClockRate ?? 1, clients, faultMs: options.faultMs ?? null }, events };
  const outDir = options.outDir ?? '.test-results/nemesis';
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${runId}.json`);
  writeFileSync(file, JSON.stringify(history));
  failure ??= crashed.length > 0 ? new Error(crashed.join('; ')) : undefined;
  if (failure) throw new Error(`${String((failure as Error).message ?? failure)} (history: ${file}; clients' stderr: ${exits.map((e) => e.stderr()).join(' | ')})`, { cause: failure });
  return { store: store.name, fault, seed: options.seed, file, report: checkHistory(history), seconds: Math.round((now() - startedAt) / 100) / 10, clientClockRate, storeClockRate };
}

/** libfaketime's path; throws if it is not installed (row-plan.ts skips the rows that need it). */
function libfaketime(): string {
  const path = findLibfaketime();
  if (!path) throw new Error('libfaketime is not installed (Debian package faketime)');
  return path;
}
