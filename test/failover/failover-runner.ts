import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { countsBetween, FailoverLedger, type LedgerCounts } from './failover-ledger.js';
import { KEY_PREFIX, type FailoverTopology } from './failover-topologies.js';

const WORKER = fileURLToPath(new URL('./failover-worker.mjs', import.meta.url));

const PROCESSES = 3;
const WORKERS_PER_PROCESS = 4;
const LEASE_MS = 6_000;
/** Holds long enough to span a failover now and then (window + promotion: ~5 s), renewed every lease / 3. */
const HOLD_MS: [number, number] = [1_000, 6_000];
/** How long the doomed master takes writes with replication cut, before it is killed. */
export const WINDOW_MS = 2_000;
/** Acquisitions that show the lock works again (after a promotion), and before the next failover. */
const STEADY_ACQUISITIONS = 4;

/** What one failover did. */
export interface FailoverRow extends LedgerCounts {
  readonly configuration: string;
  readonly failover: number;
  /** From the master's SIGKILL to a replica answering as master. */
  readonly promotionMs: number;
  /** The longest time with no acquisition at all, from the replication cut to the recovery. */
  readonly unavailableMs: number;
}

export interface FailoverRun {
  readonly rows: FailoverRow[];
  /** Per worker process: acquisitions, writes, holders that learnt they lost their lock, errors by name. */
  readonly workerStats: Record<string, unknown>[];
}

/** Where the rows go; with `guarded`, every holder also writes its fence through RedisFenceGuard to that Redis (see guarded-log.ts). */
export interface FailoverRunOptions {
  readonly rows?: FailoverRow[];
  readonly guarded?: { url: string; prefix: string };
}

/**
 * Runs 3 processes x 4 workers taking the locks of `topology.keys` (lease 6 s, holds 1-6 s) and
 * fails the keys' master over `failovers` times, waiting for the lock to work again in between.
 */
export async function runFailovers(
  topology: FailoverTopology,
  replicas: { min: number; timeoutMs: number } | undefined,
  failovers: number,
  options: FailoverRunOptions = {},
): Promise<FailoverRun> {
  const { rows = [], guarded } = options;
  const configuration = `${topology.name}, ${replicas ? `replicas: { min: ${replicas.min}, timeoutMs: ${replicas.timeoutMs} }` : 'no replicas option'}`;
  const ledger = new FailoverLedger();
  const workerStats: Record<string, unknown>[] = [];
  const config = JSON.stringify({
    ...topology.workerClient(),
    replicas,
    keys: topology.keys,
    keyPrefix: KEY_PREFIX,
    leaseMs: LEASE_MS,
    workers: WORKERS_PER_PROCESS,
    holdMs: HOLD_MS,
    guarded,
  });
  const children: ChildProcess[] = [];
  const exits = Array.from({ length: PROCESSES }, () => {
    const child = fork(WORKER, [config], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Record<string, unknown>) => {
        if (message.event === 'ready') return resolve();
        if (message.event === 'done') return void workerStats.push(message.stats as Record<string, unknown>);
        handle(child, message);
      });
      child.once('exit', (code) => reject(new Error(`failover worker exited before ready (${code}): ${stderr}`)));
    });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => (ledger.processGone(child.pid!), resolve())),
    );
    return { ready, exited };
  });

  function handle(child: ChildProcess, message: Record<string, unknown>): void {
    const reply = (payload: Record<string, unknown>) =>
      child.connected && child.send({ reply: message.id, ...payload }, () => undefined);
    const section = message.section as number;
    switch (message.op) {
      case 'begin':
        return void reply({
          section: ledger.begin(
            child.pid!,
            message.key as string,
            message.fence as number,
            message.expiresAt as number,
          ),
        });
      case 'extended':
        return ledger.extended(message.key as string, message.fence as number, message.expiresAt as number);
      case 'read':
        return void reply({ value: ledger.read(section) });
      case 'write':
        ledger.write(section, message.value as number);
        return void reply({});
      case 'end':
        return ledger.end(section);
    }
  }

  const firstRow = rows.length;
  let failure: Error | undefined;
  try {
    await Promise.all(exits.map((e) => e.ready));
    for (const child of children) child.send({ cmd: 'go' });
    let steadySince = performance.now();
    for (let failover = 1; failover <= failovers; failover++) {
      await until(
        () => ledger.acquisitionsSince(steadySince) >= STEADY_ACQUISITIONS,
        60_000,
        'the lock to work before a failover',
      );
      const before = ledger.counts();
      const times = await topology.failOver(WINDOW_MS);
      await until(
        () => ledger.acquisitionsSince(times.promotedAt) >= STEADY_ACQUISITIONS,
        60_000,
        'the lock to work again after a failover',
      );
      steadySince = performance.now();
      // Holders of before the failover may still be inside: their writes belong to this failover.
      await until(() => ledger.openSince(times.cutAt) === 0, 60_000, 'the holders of before the failover to leave');
      rows.push({
        configuration,
        failover,
        ...countsBetween(before, ledger.counts()),
        promotionMs: Math.round(times.promotedAt - times.killedAt),
        unavailableMs: Math.round(ledger.longestGap(times.cutAt, steadySince)),
      });
    }
  } catch (error) {
    failure = error as Error;
  } finally {
    for (const child of children) if (child.connected) child.send({ cmd: 'stop' }, () => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(exits.map((e) => e.exited)),
      new Promise((resolve) => (timer = setTimeout(resolve, 20_000))),
    ]);
    clearTimeout(timer);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  if (failure) {
    // What the workers and the servers saw, to tell a stuck client from a stuck failover.
    throw new Error(
      `${failure.message} (failover ${rows.length - firstRow + 1}); workers: ${JSON.stringify(workerStats)}; servers: ${await topology.describe().catch(String)}`,
      { cause: failure },
    );
  }
  return { rows: rows.slice(firstRow), workerStats };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Per configuration: failovers, second holders, lost updates, fence regressions, unavailable time. */
export function summarise(rows: readonly FailoverRow[]): string {
  const header = [
    'configuration',
    'failovers',
    'failovers with a lost lock',
    'second holders (lost locks)',
    'lost updates',
    'stale writes (a fenced resource refuses them)',
    'fence regressions',
    'acquisitions',
    'unavailable ms (median / max)',
    'promotion ms (median)',
  ];
  const byConfiguration = new Map<string, FailoverRow[]>();
  for (const row of rows)
    byConfiguration.set(row.configuration, [...(byConfiguration.get(row.configuration) ?? []), row]);
  const lines = [...byConfiguration].map(([configuration, group]) => {
    const sum = (pick: (row: FailoverRow) => number) => group.reduce((total, row) => total + pick(row), 0);
    const unavailable = group.map((row) => row.unavailableMs);
    return [
      configuration,
      group.length,
      group.filter((row) => row.secondHolders > 0).length,
      sum((r) => r.secondHolders),
      sum((r) => r.lostUpdates),
      sum((r) => r.staleWrites),
      sum((r) => r.fenceRegressions),
      sum((r) => r.acquisitions),
      `${median(unavailable)} / ${Math.max(...unavailable)}`,
      median(group.map((row) => row.promotionMs)),
    ].map(String);
  });
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
