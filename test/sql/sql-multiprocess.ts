import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SqlTarget } from './sql-target.js';

// Needs the built package (dist/esm): `npm test` builds it first.
const script = fileURLToPath(new URL('./sql-counter-worker.mjs', import.meta.url));

interface Message {
  readonly event: string;
  readonly holds?: Hold[];
}

interface Hold {
  readonly value: number;
  readonly fence: number | undefined;
  readonly pid: number;
}

function startWorker(params: Record<string, unknown>) {
  const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  // Lines are queued as they come: one may arrive before anyone asks for it.
  const queued: Message[] = [];
  const waiting: ((message: Message) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as Message;
    const resolve = waiting.shift();
    if (resolve) resolve(message);
    else queued.push(message);
  });
  const exited = once(child, 'exit');
  const nextLine = () =>
    Promise.race([
      queued.length > 0 ? Promise.resolve(queued.shift()!) : new Promise<Message>((resolve) => waiting.push(resolve)),
      exited.then(([code]) => Promise.reject(new Error(`worker exited (${code}): ${stderr}`))),
    ]);
  return { child, nextLine };
}

/** Runs `processes` worker processes on one counter row at once; resolves every hold and the final value. */
async function race(target: SqlTarget, processes: number, params: Record<string, unknown>): Promise<{ holds: Hold[]; final: number }> {
  const counter = String(params.counter);
  await target.query(`INSERT INTO sql_counters (name, value) VALUES (${target.param(1)}, 0)`, [counter]);
  const workers = Array.from({ length: processes }, () => startWorker({ type: target.name, url: target.url(), ...params }));
  try {
    for (const worker of workers) expect((await worker.nextLine()).event).toBe('ready');
    for (const worker of workers) worker.child.stdin!.end('go\n');
    const results = await Promise.all(workers.map((worker) => worker.nextLine()));
    const rows = await target.query(`SELECT value FROM sql_counters WHERE name = ${target.param(1)}`, [counter]);
    return { holds: results.flatMap((result) => result.holds!), final: Number(rows[0]!.value) };
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
  }
}

/** 4 OS processes x 8 workers on one key, each process with a pool of 4 shared by the locks and the work. */
export function describeSqlMultiProcess(target: SqlTarget): void {
  describe(`${target.name}: 4 OS processes x 8 workers on one key, pool size 4`, () => {
    const PROCESSES = 4;
    const WORKERS = 8;
    const ITERATIONS = 4;

    it('loses no update of a counter row read and written in separate statements, and fences follow the order of the holds', async () => {
      await target.query('CREATE TABLE IF NOT EXISTS sql_counters (name VARCHAR(64) PRIMARY KEY, value INTEGER NOT NULL)');
      const common = { keyPrefix: 'mp:', key: `counter-${randomUUID().slice(0, 8)}`, workers: WORKERS, iterations: ITERATIONS, poolSize: 4 };

      // Without the lock the same work loses updates: the test can fail.
      const unlocked = await race(target, 1, { ...common, counter: `unlocked-${randomUUID()}`, lock: false });
      expect(unlocked.final).toBeLessThan(WORKERS * ITERATIONS);

      const started = performance.now();
      const locked = await race(target, PROCESSES, { ...common, counter: `locked-${randomUUID()}`, lock: true });
      const total = PROCESSES * WORKERS * ITERATIONS;
      expect(locked.final).toBe(total);
      expect(locked.holds).toHaveLength(total);
      // Each hold read the value the previous one wrote: 0, 1, 2, ... with no value read twice.
      const byValue = [...locked.holds].sort((x, y) => x.value - y.value);
      expect(byValue.map((hold) => hold.value)).toEqual(Array.from({ length: total }, (_, i) => i));
      for (let i = 1; i < total; i++) expect(byValue[i]!.fence!).toBeGreaterThan(byValue[i - 1]!.fence!);
      expect(new Set(locked.holds.map((hold) => hold.pid)).size).toBe(PROCESSES);
      process.stdout.write(`${target.name}: ${total} locked increments by ${PROCESSES}x${WORKERS} workers in ${Math.round(performance.now() - started)} ms\n`);
    }, 60_000);
  });
}
