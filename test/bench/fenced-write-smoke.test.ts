import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireBinary } from '../harness/server-process.js';

// `npm run bench:fence` in its quickest form: it must start its servers, write through both guards
// and print its figures. Timing is not asserted. Needs the built package (dist/esm): `npm test` builds it first.
const script = fileURLToPath(new URL('../../bench/fenced-write.mjs', import.meta.url));

describe('bench/fenced-write.mjs', () => {
  it('measures plain and fenced writes on PostgreSQL and Redis, paired', async () => {
    requireBinary('/usr/bin/redis-server', 'redis-server');
    requireBinary('/usr/lib/postgresql/15/bin/postgres', 'postgresql');
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [script, '--writes', '20', '--rounds', '1'],
        { timeout: 90_000 },
        (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
      ),
    );
    const results = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, Record<string, number>>;
    expect(Object.keys(results).sort()).toEqual(['postgres', 'redis']);
    for (const row of Object.values(results)) {
      expect(row.plainUs).toBeGreaterThan(0);
      expect(row.fencedUs).toBeGreaterThan(0);
      expect(row.ratio).toBeGreaterThan(0);
    }
  }, 120_000);
});
