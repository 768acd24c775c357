/**
 * The contract suite shipped in `nestjs-distributed-lock/backend` depends on no test runner: run
 * under `node --test` against the built package, it passes on the memory store and fails on a
 * store that lets every claimant in.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SUITE = join(dirname(fileURLToPath(import.meta.url)), 'node-test/memory-contract.node.mjs');

function runNodeTest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const environment = { ...process.env, ...env };
    delete environment.NODE_OPTIONS; // jest's --experimental-vm-modules is not for the child
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', SUITE], {
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const count = (output: string, name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(output)?.[1]);

describe('the shipped contract suite under node:test', () => {
  it('passes on the memory store', async () => {
    const { code, output } = await runNodeTest({});
    expect({ code, failed: count(output, 'fail'), tail: code === 0 ? '' : output.slice(-3000) }).toEqual({
      code: 0,
      failed: 0,
      tail: '',
    });
    expect(count(output, 'pass')).toBeGreaterThan(60); // core, hold bounds, semaphores, inspection (71 today)
  }, 60_000);

  it('fails on a store that lets every claimant in', async () => {
    const { code, output } = await runNodeTest({ CONTRACT_BROKEN: '1' });
    expect(code).not.toBe(0);
    expect(count(output, 'fail')).toBeGreaterThan(0);
    expect(output).toMatch(/not ok \d+ - lets one holder in at a time, across instances/);
  }, 60_000);
});
