import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createLockBackend, InvalidLockArgumentError, LockEngine, type BackendOptions } from '../../lib/index.js';
import { describeTicks, runTicks, type TickRun } from './tick-runner.js';

/** A store as the scheduled-job tests see it: servers, options for the instances' processes, timings. */
export interface TickTarget {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Backend options for a separate process. */
  processConfig(): unknown;
  /** Whether the store keeps minHoldMs (ZooKeeper refuses it). */
  readonly minHold: boolean;
  /** The schedule's period for the minHoldMs runs: 1 s, or longer where the store rounds the hold up (etcd: whole seconds, 2 s at least). */
  readonly periodMs: number;
  /** How long after its holder process dies a lock with a 2 s lease frees, at most. */
  readonly crashFreeMs: number;
}

/** The instances' schedules fire up to 300 ms before and after the tick (injected skew). */
const SKEWS = [-300, 0, 300];
const JOB_MS = 5;
const LEASE_MS = 2_000;
/**
 * Between the 600 ms spread of the instances' firing times (less lets a late instance run the tick
 * again) and the 1 s period (more makes the instance that ran a tick find its own hold at the next
 * one): halfway, so a timer may fire up to 200 ms late either way.
 */
const MIN_HOLD_MS = 800;

/**
 * Scheduled jobs across 3 real processes whose schedules are skewed by -300, 0 and +300 ms: with
 * minHoldMs every tick runs exactly once; without it, fast jobs run several times per tick; an
 * instance SIGKILLed mid-job lets the next tick run elsewhere; a hung job is stopped at maxHoldMs;
 * a process that exits right after its job still blocks its tick.
 */
export function describeTickSuite(target: TickTarget): void {
  describe(`${target.name}: a scheduled job across 3 instances with ±300 ms skew`, () => {
    const keyPrefix = `ticks:${randomUUID().slice(0, 8)}:`;
    const base = (name: string): Omit<TickRun, 'ticks' | 'instances' | 'periodMs'> => ({
      backend: target.processConfig(),
      keyPrefix,
      key: `${name}:${randomUUID().slice(0, 8)}`,
      leaseMs: LEASE_MS,
      jobMs: JOB_MS,
    });
    beforeAll(() => target.start(), 60_000);
    afterAll(() => target.stop(), 60_000);

    // Where the store cannot keep minHoldMs, its two runs are replaced by the refusal (never skipped).
    const withMinHold = target.minHold ? it : (_name: string) => undefined;
    if (!target.minHold) {
      it('refuses minHoldMs with InvalidLockArgumentError naming the store (it cannot keep a key past its holder)', async () => {
        const engine = new LockEngine(await createLockBackend(target.processConfig() as BackendOptions), { keyPrefix });
        try {
          const refused = engine.acquire('refused', { minHoldMs: MIN_HOLD_MS });
          await expect(refused).rejects.toThrow(InvalidLockArgumentError);
          await expect(refused).rejects.toThrow(target.name);
        } finally {
          await engine.close();
        }
      });
    }

    withMinHold(
      'with minHoldMs: each of 20 ticks of a 5 ms job runs exactly once',
      async () => {
        const result = await runTicks({
          ...base('once'),
          minHoldMs: MIN_HOLD_MS,
          periodMs: target.periodMs,
          ticks: 20,
          instances: SKEWS.map((skewMs) => ({ skewMs })),
        });
        console.log(
          `${target.name} with minHoldMs ${MIN_HOLD_MS}, period ${target.periodMs} ms: ${describeTicks(result)}`,
        );
        expect(result.events.filter((e) => e.event === 'error')).toEqual([]);
        expect(result.runsByTick.map((runs) => runs.length)).toEqual(Array(20).fill(1));
        expect(result.skipsByTick).toEqual(Array(20).fill(2));
      },
      240_000,
    );

    it('without minHoldMs: the same job runs more than once per tick (what minHoldMs prevents)', async () => {
      const result = await runTicks({
        ...base('twice'),
        periodMs: 1_000,
        ticks: 5,
        instances: SKEWS.map((skewMs) => ({ skewMs })),
      });
      console.log(`${target.name} without minHoldMs: ${describeTicks(result)}`);
      expect(result.events.filter((e) => e.event === 'error')).toEqual([]);
      const doubled = result.runsByTick.filter((runs) => runs.length > 1).length;
      expect(doubled).toBeGreaterThan(0);
    }, 120_000);

    withMinHold(
      'a process that exits right after its fast job still blocks its tick until minHoldMs',
      async () => {
        const result = await runTicks({
          ...base('exit'),
          minHoldMs: MIN_HOLD_MS,
          periodMs: target.periodMs,
          ticks: 3,
          instances: SKEWS.map((skewMs) => ({ skewMs, behaviour: 'exit' as const })),
        });
        console.log(`${target.name}, every instance exits after its run: ${describeTicks(result)}`);
        // Each tick ran once, each on another process, each of which was gone before the others fired.
        expect(result.runsByTick.map((runs) => runs.length)).toEqual([1, 1, 1]);
        expect(new Set(result.runsByTick.flat()).size).toBe(3);
        expect(result.events.filter((e) => e.event === 'exit')).toHaveLength(3);
        expect(result.skipsByTick).toEqual([2, 1, 0]);
      },
      120_000,
    );

    it('the instance running the job is SIGKILLed mid-job: the next tick runs on another instance, on time', async () => {
      const periodMs = Math.ceil((target.crashFreeMs + 1_500) / 1_000) * 1_000;
      let killed: number | undefined;
      const result = await runTicks({
        ...base('killed'),
        jobMs: 60_000,
        periodMs,
        ticks: 2,
        instances: SKEWS.map((skewMs) => ({ skewMs })),
        onRan: (instance, tick, kill) => {
          if (tick !== 0) return;
          killed = instance;
          kill();
        },
      });
      console.log(
        `${target.name}, runner of tick 0 SIGKILLed mid-job (period ${periodMs} ms): ${describeTicks(result)}`,
      );
      expect(result.runsByTick[0]).toEqual([killed]);
      expect(result.runsByTick[1]).toHaveLength(1);
      expect(result.runsByTick[1][0]).not.toBe(killed);
      // On time: within the skew and a little start-up of the tick it belongs to.
      const ran = result.events.find((e) => e.event === 'ran' && e.tick === 1)!;
      expect(ran.at - result.tickAt(1)).toBeLessThan(300 + 1_000);
    }, 120_000);

    it('a hung job loses its lock at maxHoldMs (signal aborted with LockLostError) and the next tick runs', async () => {
      const maxHoldMs = 1_000;
      const periodMs = Math.ceil((maxHoldMs + Math.max(LEASE_MS, target.crashFreeMs) + 1_000) / 1_000) * 1_000;
      const result = await runTicks({
        ...base('hung'),
        maxHoldMs,
        ...(target.minHold ? { minHoldMs: MIN_HOLD_MS } : {}),
        periodMs,
        ticks: 3,
        instances: SKEWS.map((skewMs) => ({ skewMs, behaviour: 'hang' as const })),
      });
      console.log(
        `${target.name}, hung job with maxHoldMs ${maxHoldMs} (period ${periodMs} ms): ${describeTicks(result)}`,
      );
      const aborted = result.events.filter((e) => e.event === 'aborted');
      expect(aborted.length).toBeGreaterThanOrEqual(1);
      expect(aborted[0]).toMatchObject({ name: 'LockLostError', tick: 0 });
      expect(aborted[0].message).toContain('maxHoldMs (1000 ms)');
      const ran0 = result.events.find((e) => e.event === 'ran' && e.tick === 0)!;
      expect(aborted[0].at - ran0.at).toBeGreaterThanOrEqual(maxHoldMs - 5);
      // The hung job kept its tick to itself, and did not block the next ones (with minHoldMs, each ran exactly once).
      expect(result.runsByTick[0]).toHaveLength(1);
      expect(result.runsByTick[1].length).toBeGreaterThanOrEqual(1);
      if (target.minHold) expect(result.runsByTick.map((runs) => runs.length)).toEqual([1, 1, 1]);
    }, 120_000);
  });
}
