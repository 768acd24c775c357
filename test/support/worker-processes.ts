import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { snapshotDist } from '../faults/dist-snapshot.js';

/** A worker process speaking the stdin/stdout protocol of worker-bootstrap.mjs (readyOnStdin, doneOnStdout). */
export interface WorkerProcess<Done> {
  readonly child: ChildProcess;
  /** The next JSON line it prints; rejects with its stderr if it exits first. */
  nextLine(): Promise<{ event: string } & Partial<Done>>;
  readonly exited: Promise<unknown[]>;
}

/** Spawns `script` (a worker on worker-bootstrap.mjs) with `params` as its JSON argv[2]. */
export function startWorker<Done>(script: string, params: Record<string, unknown>): WorkerProcess<Done> {
  const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // Lines are queued as they come, so none is lost while the parent awaits another worker.
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) =>
    (waiting.shift() ?? ((l: string) => queued.push(l)))(line),
  );
  const exited = once(child, 'exit');
  const nextLine = () =>
    Promise.race([
      new Promise<string>((resolve) => (queued.length ? resolve(queued.shift()!) : waiting.push(resolve))).then(
        (line) => JSON.parse(line) as { event: string } & Partial<Done>,
      ),
      exited.then(([code]) => Promise.reject(new Error(`worker exited (${code}): ${stderr}`))),
    ]);
  return { child, nextLine, exited };
}

/**
 * Runs one worker process per entry of `params` on a private copy of the built package: waits
 * until every one is ready, starts them at once, and resolves their "done" lines (in order) once
 * every one has exited with code 0. The processes are killed if anything fails.
 */
export async function runWorkers<Done>(script: string, params: Record<string, unknown>[]): Promise<Done[]> {
  const dist = await snapshotDist();
  const workers = params.map((each) => startWorker<Done>(script, { dist: dist.url, ...each }));
  try {
    for (const worker of workers) {
      const ready = await worker.nextLine();
      if (ready.event !== 'ready') throw new Error(`worker said ${JSON.stringify(ready)} instead of ready`);
    }
    for (const worker of workers) worker.child.stdin!.end('go\n');
    const results = await Promise.all(workers.map((worker) => worker.nextLine()));
    const codes = (await Promise.all(workers.map((worker) => worker.exited))).map(([code]) => code);
    if (codes.some((code) => code !== 0)) throw new Error(`workers exited with ${codes.join(', ')}`);
    return results as Done[];
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
    dist.remove();
  }
}
