import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireBinary } from '../harness/server-process.js';

// `npm run bench:cluster` in its quickest form: it must run end to end and print its table. Timing is
// not asserted; what the other nodes receive per release is a count, not a speed.
// Needs the built package (dist/esm): `npm test` builds it first.
const script = fileURLToPath(new URL('../../bench/cluster-release.mjs', import.meta.url));

describe('bench/cluster-release.mjs', () => {
  it('measures sharded and plain releases side by side on a local Cluster', async () => {
    requireBinary('/usr/bin/redis-server', 'redis-server');
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [script, '--seconds', '0.5', '--rounds', '2', '--keys', '2'],
        { timeout: 90_000 },
        (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
      ),
    );
    const rows = new Map(
      stdout
        .split('\n')
        .map((line) => line.split(' | '))
        .filter((cells) => cells.length === 4)
        .map(([metric, ...values]) => [metric, values.map(Number)]),
    );
    expect(rows.get('releases/s')![0]).toBeGreaterThan(0);
    expect(rows.get('releases/s')![1]).toBeGreaterThan(0);
    // Two backends take turns on each key, so releases announce themselves (somebody waits).
    expect(rows.get('release messages sent per release')![0]).toBeGreaterThan(0);
    expect(rows.get('release messages sent per release')![1]).toBeGreaterThan(0);
    // Sharded: the nodes that do not own the keys are told nothing; plain: each gets every release message.
    expect(rows.get('other nodes: messages relayed per release message (each, mean)')!.slice(0, 2)).toEqual([0, 1]);
  }, 120_000);
});
