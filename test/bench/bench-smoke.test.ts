import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireBinary } from '../harness/server-process.js';

// The benchmark suite in its quickest form, on a subset: it must run end to end and write
// well-formed output. Timing is not asserted (speed claims live in docs/benchmarks.md).
// Needs the built package (dist/esm): `npm test` builds it first.
const runner = fileURLToPath(new URL('../../bench/run.mjs', import.meta.url));

interface Summary {
  id: string;
  metric: string;
  ours?: string;
  contenders: Record<string, { median: Record<string, number>; rounds: Record<string, unknown>[] }>;
  ratios: Record<string, number | null>;
}

describe('bench/run.mjs --quick', () => {
  it('measures ours and raw ioredis side by side and writes JSON, SVG and a table', async () => {
    requireBinary('/usr/bin/redis-server', 'redis-server');
    const out = mkdtempSync(join(tmpdir(), 'ndl-bench-smoke-'));
    try {
      await new Promise<void>((resolve, reject) =>
        execFile(
          process.execPath,
          [runner, '--quick', '--workloads', 'uncontended,contended4x8', '--contenders', 'ours,raw', '--out', out],
          { timeout: 150_000 },
          (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve()),
        ),
      );
      const report = JSON.parse(readFileSync(join(out, 'benchmarks.json'), 'utf8')) as {
        meta: Record<string, unknown>;
        workloads: Summary[];
      };
      expect(report.meta).toEqual(expect.objectContaining({ mode: 'quick', node: process.version }));
      expect(report.workloads.map((w) => w.id)).toEqual(['uncontended', 'contended4x8']);
      for (const workload of report.workloads) {
        expect(Object.keys(workload.contenders).sort()).toEqual(['ours', 'raw']);
        expect(workload.ours).toBe('ours');
        for (const { median } of Object.values(workload.contenders)) expect(median[workload.metric]).toBeGreaterThan(0);
        expect(workload.ratios.raw).toBeGreaterThan(0);
      }
      // The keys each run left in Redis: ours a fence counter per key, every one expiring; raw none.
      const uncontended = report.workloads[0].contenders;
      expect(uncontended.ours.median.keysLeft).toBeGreaterThan(0);
      expect(uncontended.ours.median.keysWithoutTtl).toBe(0);
      expect(uncontended.raw.median.keysLeft).toBe(0);
      expect(readFileSync(join(out, 'benchmarks-table.md'), 'utf8')).toContain('keys left in redis');
      const contended = report.workloads[1].contenders.ours.median;
      expect(contended.fairness).toBeGreaterThanOrEqual(0);
      expect(contended.fairness).toBeLessThanOrEqual(1);
      expect(contended.bargingShare).toBeGreaterThanOrEqual(0);
      // A lock that let two holders overlap would be a correctness bug, not a timing matter.
      expect(contended.overlaps).toBe(0);
      expect(readFileSync(join(out, 'benchmarks.svg'), 'utf8')).toMatch(/^<svg [^]*<\/svg>\n$/);
      expect(readFileSync(join(out, 'benchmarks-table.md'), 'utf8')).toContain('| **ours (redis)** |');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
