import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RedisMasters } from '../harness/redis-masters.js';
import { removeDir, tempDir } from '../harness/server-process.js';

const script = fileURLToPath(new URL('./counter-process.mjs', import.meta.url));
const PROCESSES = 4;
const ITERATIONS = 25;

interface ChildResult {
  readonly overlaps: number;
  readonly lost: number;
  readonly backendErrors: number;
  readonly ms: number;
}

/** Runs one counter process (it imports the built package: `npm test` builds it first) and resolves its report. */
function runCounter(params: Record<string, unknown>): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`counter process exited with ${code}: ${stderr}`));
      resolve(JSON.parse(stdout.trim()) as ChildResult);
    });
  });
}

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
    const params = {
      urls: masters.urls,
      key: `counter:${randomUUID().slice(0, 8)}`,
      keyPrefix: 'redlock-processes:',
      iterations: ITERATIONS,
      counterFile,
      insideFile: join(dir, 'inside'),
    };
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: PROCESSES }, () => runCounter(params)));
    const ms = performance.now() - started;
    expect(Number(readFileSync(counterFile, 'utf8'))).toBe(PROCESSES * ITERATIONS);
    expect(results.map((result) => result.overlaps)).toEqual(Array(PROCESSES).fill(0));
    expect(results.map((result) => result.lost)).toEqual(Array(PROCESSES).fill(0));
    console.info(`redlock: ${PROCESSES} processes x ${ITERATIONS} increments with 1 of 5 masters down: ${PROCESSES * ITERATIONS} of ${PROCESSES * ITERATIONS}, 0 overlaps, ${results.reduce((sum, result) => sum + result.backendErrors, 0)} LockBackendError retried, ${Math.round(ms)} ms`);
  }, 90_000);
});
