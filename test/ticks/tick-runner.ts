import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./tick-worker.mjs', import.meta.url));

export type Behaviour = 'normal' | 'exit' | 'hang';

export interface TickRun {
  readonly backend: unknown;
  readonly keyPrefix: string;
  readonly key: string;
  readonly leaseMs: number;
  readonly minHoldMs?: number;
  readonly maxHoldMs?: number;
  readonly periodMs: number;
  readonly ticks: number;
  readonly jobMs: number;
  /** One instance per entry: its schedule's offset (the injected skew) and what its job does. */
  readonly instances: readonly { skewMs: number; behaviour?: Behaviour }[];
  /** Called on every `ran` event, e.g. to SIGKILL the instance that runs a tick. */
  readonly onRan?: (instance: number, tick: number, kill: () => void) => void;
}

export interface TickEvent {
  readonly instance: number;
  readonly event: 'ready' | 'ran' | 'skipped' | 'aborted' | 'exit' | 'error' | 'done';
  readonly tick?: number;
  readonly at: number;
  readonly name?: string;
  readonly message?: string;
}

export interface TickResult {
  readonly events: readonly TickEvent[];
  /** By tick: the instances that ran it. */
  readonly runsByTick: number[][];
  /** By tick: how many instances skipped it. */
  readonly skipsByTick: number[];
  /** When tick i was scheduled to fire with no skew (epoch ms). */
  readonly tickAt: (tick: number) => number;
}

/** Starts one process per instance, fires `ticks` ticks on all of them from one start time, and collects what each did. */
export async function runTicks(run: TickRun): Promise<TickResult> {
  const events: TickEvent[] = [];
  const children: ChildProcess[] = [];
  const exited: Promise<void>[] = [];
  const ready: Promise<void>[] = [];
  run.instances.forEach(({ skewMs, behaviour = 'normal' }, instance) => {
    const { instances: _instances, onRan: _onRan, ...shared } = run;
    const child = spawn(process.execPath, [script, JSON.stringify({ ...shared, skewMs, behaviour })], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const kill = () => void child.kill('SIGKILL');
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    ready.push(new Promise((resolve, reject) => ((markReady = resolve), (failReady = reject))));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const event = { instance, ...(JSON.parse(line) as Omit<TickEvent, 'instance'>) };
      events.push(event);
      if (event.event === 'ready') markReady();
      if (event.event === 'ran') run.onRan?.(instance, event.tick!, kill);
    });
    exited.push(
      new Promise((resolve) =>
        child.once('exit', (code, signal) => {
          if (code !== 0 && signal !== 'SIGKILL')
            failReady(new Error(`tick instance ${instance} exited (${code ?? signal}): ${stderr}`));
          resolve();
        }),
      ),
    );
  });
  let startAt = 0;
  try {
    await Promise.all(ready);
    // Every instance's first tick is in the future, skew included.
    startAt = Date.now() + 1_000;
    for (const child of children) child.send({ startAt });
    const deadline = (run.ticks + 3) * run.periodMs + 10_000;
    await Promise.race([Promise.all(exited), new Promise((resolve) => setTimeout(resolve, deadline).unref())]);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(exited);
  }
  const runsByTick = Array.from({ length: run.ticks }, (_, tick) =>
    events.filter((e) => e.event === 'ran' && e.tick === tick).map((e) => e.instance),
  );
  const skipsByTick = Array.from(
    { length: run.ticks },
    (_, tick) => events.filter((e) => e.event === 'skipped' && e.tick === tick).length,
  );
  return { events, runsByTick, skipsByTick, tickAt: (tick) => startAt + tick * run.periodMs };
}

/** A one-line summary for the test log: how many ticks ran once, twice, ... and where. */
export function describeTicks(result: TickResult): string {
  const counts = new Map<number, number>();
  for (const runs of result.runsByTick) counts.set(runs.length, (counts.get(runs.length) ?? 0) + 1);
  const where = result.runsByTick.map((runs) => runs.join('+') || '-').join(' ');
  return `${[...counts]
    .sort(([a], [b]) => a - b)
    .map(([runs, ticks]) => `${ticks} ticks ran ${runs}x`)
    .join(', ')}; runner per tick: ${where}`;
}
