import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BackendOptions } from '../../lib/index.js';

const WORKER = fileURLToPath(new URL('./semaphore-worker.mjs', import.meta.url));

export interface WorkerSetup {
  /** URL of the private snapshot of dist/esm the children import. */
  readonly dist: string;
  readonly backend: BackendOptions;
  readonly key: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly permits: number;
}

export interface WorkResult {
  /** Most holders inside at once, as the parent counted them (each hold is counted only while surely held). */
  readonly maxInside: number;
  /** Entries that found `permits` holders already inside. */
  readonly violations: number;
  /** Holds per worker, per process. */
  readonly holds: number[][];
  readonly errors: Record<string, number>[];
  readonly seconds: number;
}

function start(setup: WorkerSetup, mode: 'work' | 'hold', workers = 1): { child: ChildProcess; stderr: () => string } {
  const child = fork(WORKER, [JSON.stringify({ ...setup, mode, workers })], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  return { child, stderr: () => stderr };
}

/** Resolves the first message with `event`; rejects if the child exits first. */
function nextEvent(child: ChildProcess, event: string, stderr: () => string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (message.event !== event) return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve(message);
    };
    const onExit = (code: number | null) => reject(new Error(`worker exited (${code}) before '${event}': ${stderr()}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * Runs `processes` OS processes of `workers` loops each on one semaphore for `runMs`. The parent
 * counts holders: a worker says 'enter' after it got its permit and 'leave' before it releases it,
 * and waits for each answer, so every counted interval lies inside a real hold.
 */
export async function runWorkers(
  setup: WorkerSetup,
  processes: number,
  workers: number,
  runMs: number,
): Promise<WorkResult> {
  let inside = 0;
  let maxInside = 0;
  let violations = 0;
  const children = Array.from({ length: processes }, () => start(setup, 'work', workers));
  try {
    for (const { child } of children) {
      child.on('message', (message: Record<string, unknown>) => {
        if (message.op === 'enter') {
          if (inside >= setup.permits) violations++;
          maxInside = Math.max(maxInside, ++inside);
        } else if (message.op === 'leave') inside--;
        else return;
        child.send({ reply: message.id });
      });
    }
    await Promise.all(children.map(({ child, stderr }) => nextEvent(child, 'ready', stderr)));
    const startedAt = performance.now();
    const done = children.map(({ child, stderr }) => nextEvent(child, 'done', stderr));
    for (const { child } of children) child.send({ cmd: 'go' });
    await new Promise((resolve) => setTimeout(resolve, runMs));
    for (const { child } of children) child.send({ cmd: 'stop' });
    const reports = await Promise.all(done);
    return {
      maxInside,
      violations,
      holds: reports.map((report) => report.holds as number[]),
      errors: reports.map((report) => report.errors as Record<string, number>),
      seconds: (performance.now() - startedAt) / 1000,
    };
  } finally {
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** A child process that holds one permit until it is killed. */
export async function holdInChild(setup: WorkerSetup): Promise<{ fence: number | undefined; kill(): Promise<void> }> {
  const { child, stderr } = start(setup, 'hold');
  const held = await nextEvent(child, 'held', stderr);
  return {
    fence: held.fence as number | undefined,
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
