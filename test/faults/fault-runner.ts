import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BackendOptions } from '../../lib/index.js';
import { FencedResource } from './fenced-resource.js';

const WORKER = fileURLToPath(new URL('./fault-worker.mjs', import.meta.url));

export type Fault = 'kill holder' | 'pause holder' | 'block holder loop' | 'restart store' | 'freeze store';

/** What the runner needs from one store. */
export interface FaultTarget {
  readonly name: string;
  /** Backend options for the worker processes. */
  workerConfig(): BackendOptions;
  /** Lease the workers' engines use. */
  readonly leaseMs: number;
  /** A holder paused or blocked this long has surely lost its lock in the store (lease, session or TTL, plus margin). */
  readonly lossMs: number;
  restartStore(): Promise<void>;
  freezeStore(): void | Promise<void>;
  thawStore(): void | Promise<void>;
  /** How long the store is frozen. Default lossMs. */
  readonly freezeMs?: number;
  /** URL of the directory of the built package (dist/esm) the workers import: a private snapshot. */
  readonly dist?: string;
}

export interface FaultRow {
  backend: string;
  fault: Fault;
  operations: number;
  lostUpdates: number;
  overlaps: number;
  abortedHolders: number;
  refusedByFence: number;
  skippedByLeaseCheck: number;
  /** Writes accepted after the fault ended: the lock kept working. */
  progressAfterFault: number;
  /** From the end of the fault (the store back, the process resumed, the lock freed) to the next accepted write. */
  recoveryMs: number | undefined;
  backendErrors: number;
  seconds: number;
}

interface WorkerStats {
  ops: number;
  refused: number;
  aborted: number;
  skipped: number;
  timeouts: number;
  errors: Record<string, number>;
}

const PROCESSES = 3;
const WORKERS_PER_PROCESS = 2;
const WARMUP_MS = 600;
/** After the fault, the run goes on until this many writes were accepted (the lock works again)... */
const WRITES_AFTER_FAULT = 50;
/** ...or until this long after the fault ended. */
const RECOVERY_LIMIT_MS = 15_000;

/** Rows of every scenario run in this process, for the printed table. */
export const faultRows: FaultRow[] = [];

/**
 * Runs PROCESSES worker processes hammering one key, injects `fault` after a warm-up, lets them
 * run on for a while, stops them and returns what the resource and the workers saw.
 */
export async function runFaultScenario(target: FaultTarget, fault: Fault): Promise<FaultRow> {
  const started = performance.now();
  const resource = new FencedResource();
  const key = `fault:${fault.replace(/\s+/g, '-')}:${Math.random().toString(36).slice(2, 8)}`;
  let checkpointAction: ((child: ChildProcess) => Promise<{ blockMs?: number } | 'no-reply'>) | undefined;
  let faultHit: () => void = () => undefined;
  const faultHitPromise = new Promise<void>((resolve) => (faultHit = resolve));
  const stats: WorkerStats[] = [];
  const children: ChildProcess[] = [];
  const config = JSON.stringify({
    backend: target.workerConfig(),
    key,
    keyPrefix: 'faults:',
    leaseMs: target.leaseMs,
    workers: WORKERS_PER_PROCESS,
    dist: target.dist,
  });

  const exits = Array.from({ length: PROCESSES }, () => {
    const child = fork(WORKER, [config], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Record<string, unknown>) => {
        if (message.event === 'ready') return resolve();
        if (message.event === 'done') return void stats.push(message.stats as WorkerStats);
        void handle(child, message);
      });
      child.once('exit', (code) => reject(new Error(`worker exited before ready (${code}): ${stderr}`)));
    });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        resource.processGone(child.pid!);
        resolve();
      }),
    );
    return { ready, exited };
  });

  async function handle(child: ChildProcess, message: Record<string, unknown>): Promise<void> {
    const reply = (payload: Record<string, unknown>) => {
      if (child.connected) child.send({ reply: message.id, ...payload }, () => undefined);
    };
    const section = message.section as number;
    switch (message.op) {
      case 'begin': {
        const id = resource.begin(child.pid!, message.fence as number | undefined);
        return reply(id === undefined ? { ok: false } : { ok: true, section: id });
      }
      case 'read':
        return reply({ value: resource.read() });
      case 'write':
        return reply({ ok: resource.write(section, message.value as number) });
      case 'end':
        resource.end(section);
        return reply({});
      case 'checkpoint': {
        const action = checkpointAction;
        checkpointAction = undefined;
        const result = action ? await action(child) : {};
        if (action) faultHit();
        if (result !== 'no-reply') reply(result);
      }
    }
  }

  try {
    await Promise.all(exits.map((e) => e.ready));
    for (const child of children) child.send({ cmd: 'go' });
    await sleep(WARMUP_MS);
    const faultEndedAt = await inject(target, fault, async (action) => {
      checkpointAction = action;
      const hit = await settlesWithin(faultHitPromise, 15_000);
      if (!hit) throw new Error(`no holder reached a checkpoint within 15 s to inject "${fault}"`);
    });
    const recovered = () => resource.writesSince(faultEndedAt) >= WRITES_AFTER_FAULT;
    for (const deadline = faultEndedAt + RECOVERY_LIMIT_MS; !recovered() && performance.now() < deadline;)
      await sleep(50);
    const progressAfterFault = resource.writesSince(faultEndedAt);
    const firstWrite = resource.firstWriteAfter(faultEndedAt);
    for (const child of children) if (child.connected) child.send({ cmd: 'stop' }, () => undefined);
    await settlesWithin(Promise.all(exits.map((e) => e.exited)), 20_000);
    const sum = (pick: (s: WorkerStats) => number) => stats.reduce((total, s) => total + pick(s), 0);
    const row: FaultRow = {
      backend: target.name,
      fault,
      operations: resource.writes,
      lostUpdates: Math.max(resource.lostUpdates, resource.writes - resource.value),
      overlaps: resource.overlaps(),
      abortedHolders: sum((s) => s.aborted),
      refusedByFence: resource.refused,
      skippedByLeaseCheck: sum((s) => s.skipped),
      progressAfterFault,
      recoveryMs: firstWrite === undefined ? undefined : Math.max(0, Math.round(firstWrite - faultEndedAt)),
      backendErrors: sum((s) => Object.values(s.errors).reduce((a, b) => a + b, 0)),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
    faultRows.push(row);
    return row;
  } finally {
    for (const child of children) {
      child.kill('SIGCONT');
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}

type ArmCheckpoint = (action: (child: ChildProcess) => Promise<{ blockMs?: number } | 'no-reply'>) => Promise<void>;

/** Injects the fault; resolves performance.now() when it is over (the process resumed, the store is back). */
async function inject(target: FaultTarget, fault: Fault, armCheckpoint: ArmCheckpoint): Promise<number> {
  switch (fault) {
    case 'kill holder':
      // SIGKILL between the holder's read and its write.
      await armCheckpoint(async (child) => {
        child.kill('SIGKILL');
        return 'no-reply';
      });
      return performance.now() + target.lossMs; // the lock frees only when the store notices
    case 'pause holder':
      // SIGSTOP between read and write for longer than the lease; the reply waits in the pipe.
      await armCheckpoint(async (child) => {
        child.kill('SIGSTOP');
        setTimeout(() => child.kill('SIGCONT'), target.lossMs).unref();
        return {};
      });
      await sleep(target.lossMs);
      return performance.now();
    case 'block holder loop':
      await armCheckpoint(async () => ({ blockMs: target.lossMs }));
      await sleep(target.lossMs);
      return performance.now();
    case 'restart store':
      await target.restartStore();
      return performance.now();
    case 'freeze store':
      await target.freezeStore();
      await sleep(target.freezeMs ?? target.lossMs);
      await target.thawStore();
      return performance.now();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether `promise` settled within `ms`. The timer is cleared as soon as it does: a bare
 * `sleep(ms)` in a race kept the test process alive for up to 20 s after the suite ended
 * ("Jest did not exit one second after the test run has completed").
 */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** The table, as printed after each backend's suite and copied into docs/operations.md. */
export function formatFaultTable(rows: readonly FaultRow[]): string {
  const header = [
    'backend',
    'fault',
    'operations',
    'lost updates',
    'overlaps',
    'aborted holders',
    'refused by fence',
    'skipped by lease check',
    'ops after fault',
    'recovery ms',
    'store errors',
    's',
  ];
  const lines = rows.map((r) =>
    [
      r.backend,
      r.fault,
      r.operations,
      r.lostUpdates,
      r.overlaps,
      r.abortedHolders,
      r.refusedByFence,
      r.skippedByLeaseCheck,
      r.progressAfterFault,
      r.recoveryMs ?? '-',
      r.backendErrors,
      r.seconds,
    ].map(String),
  );
  const table = [header, ...lines];
  return table
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n')
    .replace(/\n/, `\n|${header.map(() => '---').join('|')}|\n`);
}
