import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLockBackend, LeaderService, LockEngine, type BackendOptions, type LeaderInfo } from '../../lib/index.js';
import { UNFAIR_REJOIN_DELAY_MS } from '../../lib/leader/leader-campaign.js';
import { TermResource } from './term-resource.js';

const WORKER = fileURLToPath(new URL('./leader-worker.mjs', import.meta.url));
const INSTANCES = 3;

/** What the run needs from one store. */
export interface LeaderTarget {
  readonly name: string;
  backend(): BackendOptions;
  /** Lease of the leadership lock. */
  readonly leaseMs: number;
  /** A leader killed or paused this long has surely lost its leadership in the store (lease, session or TTL, plus the store's sweep). */
  readonly lossMs: number;
  restartStore(): Promise<void>;
  freezeStore(): void | Promise<void>;
  thawStore(): void | Promise<void>;
  /** URL of a private snapshot of dist/esm for the workers. */
  readonly dist?: string;
}

export interface LeaderReport {
  store: string;
  seconds: number;
  leaderships: number;
  resigns: number;
  /** What `leader(name)` said from an instance that does not campaign, and who led then. */
  observed: { said: LeaderInfo | undefined; leading: LeaderInfo };
  /** Leaderships that went to another instance than the one before. */
  moves: number;
  acceptedWrites: number;
  refusedWrites: number;
  sameTermConflicts: number;
  nonIncreasingTerms: number;
  /** Beliefs of two instances that overlapped in time (the paused instance left out). */
  overlaps: number;
  /** From the leader's last moment of leading to the next leader's first, on graceful shutdown (ms). */
  shutdownHandoverMs: number[];
  /** From SIGKILL of the leader to the next leader (ms); its term is larger. */
  killTakeoverMs: number;
  killTermLarger: boolean;
  /** From SIGSTOP of the leader to the next leader (ms). */
  pauseTakeoverMs: number;
  /** Why the paused leader's signal aborted once it resumed. */
  pausedAbortReason: string | undefined;
  /** Writes of the paused leader, sent after it resumed, refused by term. */
  lateWritesRefused: number;
  /** From the store's restart (back up) / thaw to the next accepted write (ms). */
  afterRestartMs: number;
  afterFreezeMs: number;
}

interface Worker {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<void>;
  /** Its exit code or signal and the end of its stderr, once it exited. */
  readonly exitReport: () => string;
}

/** An unref'ed sleep: a pending one never keeps the test process alive. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
const ms = (ns: bigint) => Number(ns) / 1e6;

/**
 * Three instances campaign for one leadership through phases: random resigns for `resignMs`,
 * `shutdowns` graceful shutdowns of the leader, a SIGKILL of the leader, a SIGSTOP of the leader past its
 * lease, a store restart and a store freeze. Every instance killed or stopped is replaced.
 */
export async function runLeaderScenario(
  target: LeaderTarget,
  resignMs: number,
  shutdowns: number,
): Promise<LeaderReport> {
  const started = performance.now();
  const resource = new TermResource();
  const name = `duty-${Math.random().toString(36).slice(2, 8)}`;
  const workers = new Map<number, Worker>();
  const labels = new Map<number, string>();
  const paused = new Set<number>();
  let held: { pid: number; reply: () => void } | undefined;
  let pauseNext: ((pid: number, reply: () => void) => void) | undefined;
  let serial = 0;
  const waiters: (() => void)[] = [];
  const changed = () => waiters.splice(0).forEach((wake) => wake());
  /** Resolves once `predicate` holds (checked on every message), or rejects after `timeoutMs`. */
  const until = async (what: string, predicate: () => boolean, timeoutMs = 20_000) => {
    const deadline = performance.now() + timeoutMs;
    while (!predicate()) {
      if (performance.now() > deadline) throw new Error(`${target.name}: timed out waiting for ${what}`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(100)]);
    }
  };

  const spawn = async (): Promise<Worker> => {
    const config = JSON.stringify({
      backend: target.backend(),
      name,
      instance: `i${++serial}`,
      leaseMs: target.leaseMs,
      dist: target.dist,
    });
    const child = fork(WORKER, [config], {
      stdio: ['ignore', process.env.LEADER_DEBUG ? 'inherit' : 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const pid = child.pid!;
    labels.set(pid, `i${serial}`);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`worker exited before ready (${code}): ${stderr}`)));
      child.on('message', (message: Record<string, unknown>) => {
        if (message.event === 'ready') resolve();
        handle(child, pid, message);
        changed();
      });
    });
    const exitReport = () =>
      `worker ${labels.get(pid)} exited (code ${child.exitCode}, signal ${child.signalCode}): ${stderr.trim() || '(no stderr)'}`;
    const worker = { child, pid, exited, exitReport };
    workers.set(pid, worker);
    await ready;
    return worker;
  };

  const handle = (child: ChildProcess, pid: number, message: Record<string, unknown>) => {
    const reply = (payload: Record<string, unknown> = {}) => {
      if (child.connected) child.send({ reply: message.id, ...payload }, () => undefined);
    };
    if (process.env.LEADER_DEBUG && message.event)
      process.stderr.write(`[${pid}] ${JSON.stringify(message)} paused=${paused.has(pid)}\n`);
    if (message.event === 'leader') resource.began(pid, message.term as number, BigInt(message.at as string));
    else if (message.event === 'follower') {
      resource.ended(pid, message.term as number, BigInt(message.at as string));
      if (paused.has(pid)) pausedAbortReason ??= message.reason as string;
    } else if (message.op === 'write') reply({ ok: resource.write(pid, message.term as number) });
    else if (message.op === 'checkpoint') {
      const pause = pauseNext;
      pauseNext = undefined;
      if (pause) pause(pid, () => reply());
      else reply();
    }
  };

  let pausedAbortReason: string | undefined;
  const newLeaderAfter = (old: number | undefined) => () => {
    const current = resource.current();
    return current !== undefined && current.pid !== old;
  };

  try {
    await Promise.all(Array.from({ length: INSTANCES }, spawn));
    await until('a first leader', () => resource.current() !== undefined);

    // Random resigns.
    let resigns = 0;
    for (const end = performance.now() + resignMs; performance.now() < end;) {
      await sleep(150 + Math.random() * 500);
      const leading = resource.current();
      if (leading === undefined) continue;
      workers.get(leading.pid)!.child.send({ cmd: 'resign' });
      resigns++;
      // Usually another instance; the same one again when the others were backing off after a store error.
      await until(
        'a new leadership after a resign',
        () => resource.current() !== undefined && resource.current() !== leading,
      );
    }

    // Who leads, as an instance that does not campaign sees it (LeaderService.leader: an inspection of the store).
    await until('a leader that has written', () => resource.current() !== undefined && resource.accepted > 0);
    const observer = new LeaderService(
      new LockEngine(await createLockBackend(target.backend()), { keyPrefix: 'leader-test:', instance: 'observer' }),
    );
    let observed: LeaderReport['observed'];
    try {
      const leading = resource.current()!;
      observed = {
        said: await observer.leader(name),
        leading: { instance: labels.get(leading.pid), term: leading.term },
      };
    } finally {
      await observer.close();
      await (observer as unknown as { engine: LockEngine }).engine.close();
    }

    // Graceful shutdowns of the leader.
    const shutdownHandoverMs: number[] = [];
    for (let i = 0; i < shutdowns; i++) {
      await until('a leader that has written', () => resource.current() !== undefined && resource.accepted > 0);
      // An instance that just resigned on a store without a FIFO queue (SQL) waits 1 s before it
      // campaigns again; no event says when it does. Measure the handover to a waiting follower.
      await sleep(UNFAIR_REJOIN_DELAY_MS + 200);
      const old = resource.current()!;
      workers.get(old.pid)!.child.send({ cmd: 'stop' });
      await until('a leader after a shutdown', () => newLeaderAfter(old.pid)() && old.end !== undefined);
      shutdownHandoverMs.push(ms(resource.current()!.start - old.end!));
      await workers.get(old.pid)!.exited;
      workers.delete(old.pid);
      await spawn();
    }

    // SIGKILL of the leader.
    const killed = resource.current()!;
    const killAt = process.hrtime.bigint();
    workers.get(killed.pid)!.child.kill('SIGKILL');
    resource.gone(killed.pid, killAt);
    await until('a leader after SIGKILL', newLeaderAfter(killed.pid), target.lossMs + 15_000);
    const killTakeoverMs = ms(resource.current()!.start - killAt);
    const killTermLarger = resource.current()!.term > killed.term;
    workers.delete(killed.pid);
    await spawn();

    // SIGSTOP of the leader between a checkpoint and its write, until a successor has written.
    const stopped = await new Promise<{ pid: number; reply: () => void; at: bigint }>((resolve) => {
      pauseNext = (pid, reply) => {
        paused.add(pid);
        workers.get(pid)!.child.kill('SIGSTOP');
        resolve({ pid, reply, at: process.hrtime.bigint() });
      };
    });
    held = stopped;
    await until('a leader after SIGSTOP', newLeaderAfter(stopped.pid), target.lossMs + 15_000);
    const pauseTakeoverMs = ms(resource.current()!.start - stopped.at);
    const successorFrom = resource.current()!.start;
    await until('a write of the successor', () => resource.acceptedSince(successorFrom) > 0);
    workers.get(stopped.pid)!.child.kill('SIGCONT');
    stopped.reply();
    held = undefined;
    await until('the paused leader to stop believing', () => pausedAbortReason !== undefined, 10_000);
    await until('its late write', () => (resource.refusedByPid.get(stopped.pid) ?? 0) > 0, 10_000);

    // The store restarts, then freezes.
    await target.restartStore();
    const restartedAt = process.hrtime.bigint();
    await until('a write after the store restarted', () => resource.acceptedSince(restartedAt) > 0, 30_000);
    const afterRestartMs = ms(process.hrtime.bigint() - restartedAt);
    await target.freezeStore();
    await sleep(target.lossMs);
    await target.thawStore();
    const thawedAt = process.hrtime.bigint();
    await until('a write after the store thawed', () => resource.acceptedSince(thawedAt) > 0, 30_000);
    const afterFreezeMs = ms(process.hrtime.bigint() - thawedAt);

    // An instance the scenario did not kill must still be running: say why one is not.
    const gone = [...workers.values()].filter((worker) => !worker.child.connected);
    if (gone.length > 0) throw new Error(gone.map((worker) => worker.exitReport()).join('\n'));
    for (const worker of workers.values()) worker.child.send({ cmd: 'stop' });
    await Promise.race([Promise.all([...workers.values()].map((worker) => worker.exited)), sleep(15_000)]);

    const sorted = [...resource.beliefs].sort((a, b) => (a.start < b.start ? -1 : 1));
    return {
      store: target.name,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      observed,
      leaderships: resource.beliefs.length,
      resigns,
      moves: sorted.filter((belief, i) => i > 0 && belief.pid !== sorted[i - 1].pid).length,
      acceptedWrites: resource.accepted,
      refusedWrites: resource.refused,
      sameTermConflicts: resource.sameTermConflicts,
      nonIncreasingTerms: resource.nonIncreasingTerms(),
      overlaps: resource.overlaps(paused),
      shutdownHandoverMs: shutdownHandoverMs.map((each) => Math.round(each * 10) / 10),
      killTakeoverMs: Math.round(killTakeoverMs),
      killTermLarger,
      pauseTakeoverMs: Math.round(pauseTakeoverMs),
      pausedAbortReason,
      lateWritesRefused: resource.refusedByPid.get(stopped.pid) ?? 0,
      afterRestartMs: Math.round(afterRestartMs),
      afterFreezeMs: Math.round(afterFreezeMs),
    };
  } finally {
    held?.reply();
    for (const worker of workers.values()) {
      worker.child.kill('SIGCONT');
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    }
  }
}
