import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { runCounterExperiment, type CounterResult } from '../support/counter-harness.js';
import type { SqlTarget } from './sql-target.js';

const POOL_SIZE = 4;

/** Runs `processes` counter processes on one new counter row at once, each with one pool shared by its lock backend and its work. */
async function race(
  target: SqlTarget,
  processes: number,
  params: { key: string; workers: number; iterations: number; lock: boolean; name: string },
): Promise<CounterResult> {
  await target.query(`INSERT INTO sql_counters (name, value) VALUES (${target.param(1)}, 0)`, [params.name]);
  return runCounterExperiment({
    processes,
    workers: params.workers,
    iterations: params.iterations,
    lock: params.lock,
    counter: { store: 'sql', type: target.name, url: target.url(), name: params.name, poolSize: POOL_SIZE },
    key: params.key,
    keyPrefix: 'mp:',
    leaseMs: 10_000,
    waitMs: 120_000,
    pauseMs: [0, 2],
    readFinal: async () =>
      Number(
        (await target.query(`SELECT value FROM sql_counters WHERE name = ${target.param(1)}`, [params.name]))[0].value,
      ),
  });
}

/** 4 OS processes x 8 workers on one key, each process with a pool of 4 shared by the locks and the work. */
export function describeSqlMultiProcess(target: SqlTarget): void {
  describe(`${target.name}: 4 OS processes x 8 workers on one key, pool size ${POOL_SIZE}`, () => {
    const PROCESSES = 4;
    const WORKERS = 8;
    const ITERATIONS = 4;

    it('loses no update of a counter row read and written in separate statements, and fences follow the order of the holds', async () => {
      await target.query(
        'CREATE TABLE IF NOT EXISTS sql_counters (name VARCHAR(64) PRIMARY KEY, value INTEGER NOT NULL)',
      );
      const common = { key: `counter-${randomUUID().slice(0, 8)}`, workers: WORKERS, iterations: ITERATIONS };

      // Without the lock the same work loses updates: the test can fail.
      const unlocked = await race(target, 1, { ...common, name: `unlocked-${randomUUID()}`, lock: false });
      expect(unlocked.final).toBeLessThan(WORKERS * ITERATIONS);

      const started = performance.now();
      const locked = await race(target, PROCESSES, { ...common, name: `locked-${randomUUID()}`, lock: true });
      const total = PROCESSES * WORKERS * ITERATIONS;
      expect(locked.total).toBe(total);
      expect(locked.final).toBe(total);
      expect(locked.holds).toHaveLength(total);
      // Each hold read the value the previous one wrote: 0, 1, 2, ... with no value read twice.
      const byValue = [...locked.holds].sort((x, y) => x.value - y.value);
      expect(byValue.map((hold) => hold.value)).toEqual(Array.from({ length: total }, (_, i) => i));
      for (let i = 1; i < total; i++) expect(byValue[i].fence!).toBeGreaterThan(byValue[i - 1].fence!);
      expect(new Set(locked.holds.map((hold) => hold.pid)).size).toBe(PROCESSES);
      process.stdout.write(
        `${target.name}: ${total} locked increments by ${PROCESSES}x${WORKERS} workers in ${Math.round(performance.now() - started)} ms\n`,
      );
    }, 60_000);
  });
}
