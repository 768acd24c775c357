import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCounterExperiment } from '../support/counter-harness.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { removeDir, tempDir } from '../harness/server-process.js';

const PROCESSES = 4;
const ITERATIONS = 25;

describe('redlock: several OS processes', () => {
  let masters: RedisMasters;
  let dir: string;

  beforeAll(async () => {
    masters = await RedisMasters.start(5);
    dir = tempDir('redlock-counter');
  }, 30_000);

  afterAll(async () => {
    await masters?.stop();
    if (dir) removeDir(dir);
  }, 30_000);

  it(`${PROCESSES} processes x ${ITERATIONS} locked read-modify-writes of a shared file lose no update, with 1 of 5 masters down`, async () => {
    await masters.kill(2);
    const counterFile = join(dir, 'counter');
    writeFileSync(counterFile, '0');
    const { reports, total, final, holds } = await runCounterExperiment({
      processes: PROCESSES,
      workers: 1,
      iterations: ITERATIONS,
      backend: { type: 'redlock', urls: masters.urls },
      counter: { store: 'file', path: counterFile, insideFile: join(dir, 'inside') },
      key: `counter:${randomUUID().slice(0, 8)}`,
      keyPrefix: 'redlock-processes:',
      leaseMs: 5_000,
      waitMs: 60_000,
      pauseMs: [1, 1],
      // Too few masters answered in time (a loaded machine): as an app would, try again; the report counts them.
      retryBackendErrors: true,
      readFinal: async () => Number(readFileSync(counterFile, 'utf8')),
    });
    const ms = Math.max(...reports.map((report) => report.ms));
    expect(total).toBe(PROCESSES * ITERATIONS);
    expect(final).toBe(PROCESSES * ITERATIONS);
    expect(reports.map((report) => report.overlaps)).toEqual(Array(PROCESSES).fill(0));
    expect(reports.map((report) => report.holds.filter((hold) => hold.lost).length)).toEqual(Array(PROCESSES).fill(0));
    expect(holds).toHaveLength(PROCESSES * ITERATIONS);
    console.info(
      `redlock: ${PROCESSES} processes x ${ITERATIONS} increments with 1 of 5 masters down: ${PROCESSES * ITERATIONS} of ${PROCESSES * ITERATIONS}, 0 overlaps, ${reports.reduce((sum, report) => sum + report.backendErrors, 0)} LockBackendError retried, ${Math.round(ms)} ms`,
    );
  }, 90_000);
});
