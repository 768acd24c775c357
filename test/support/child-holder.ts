import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./holder-process.mjs', import.meta.url));

export interface ChildHolder {
  readonly process: ChildProcess;
  readonly fence: number | undefined;
  /** Resolves with the next JSON line the child prints (e.g. `{ event: 'lost' }`). */
  nextEvent(): Promise<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a separate OS process (using the built package) that acquires `key` and holds it. */
export async function startChildHolder(params: {
  backend: unknown;
  key: string;
  keyPrefix: string;
  leaseMs: number;
}): Promise<ChildHolder> {
  const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout });
  const queue: Record<string, unknown>[] = [];
  const waiting: ((event: Record<string, unknown>) => void)[] = [];
  lines.on('line', (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    const resolve = waiting.shift();
    if (resolve) resolve(event);
    else queue.push(event);
  });
  const nextEvent = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const queued = queue.shift();
      if (queued) return resolve(queued);
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`holder process exited (${code}): ${stderr}`)));
    });
  const first = await nextEvent();
  return {
    process: child,
    fence: first.fence as number | undefined,
    nextEvent,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
