import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { TestingModule } from '@nestjs/testing';
import { Test } from '@nestjs/testing';
import { DistributedLockError, DistributedLockModule, LockService } from '../../lib/index.js';
import { BAD_INPUT_CASES, TemplatedJobs, type CaseContext } from './bad-input-cases.js';
import { CountingBackend } from './counting-backend.js';

// Every public entry point given bad input: a specific typed error, nothing left locked, no unhandled rejection.
const backend = new CountingBackend();
let app: TestingModule;
let ctx: CaseContext;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);

beforeAll(async () => {
  app = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ backend, leaseMs: 5_000, waitMs: 200 })],
    providers: [TemplatedJobs],
  }).compile();
  await app.init();
  ctx = { locks: app.get(LockService), jobs: app.get(TemplatedJobs) };
});
afterAll(() => app.close());
beforeEach(() => {
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});
afterEach(() => {
  process.off('unhandledRejection', onRejection);
});

const entries = [...new Set(BAD_INPUT_CASES.map((c) => c.entry))];

describe('bad-input matrix', () => {
  it(`covers every public entry point with at least 30 cases (has ${BAD_INPUT_CASES.length})`, () => {
    expect(BAD_INPUT_CASES.length).toBeGreaterThanOrEqual(30);
    expect(entries.sort()).toEqual([
      'Lock methods',
      'LockService calls',
      'decorator arguments',
      'module options',
      'templates',
    ]);
  });

  for (const entry of entries) {
    describe(entry, () => {
      it.each(BAD_INPUT_CASES.filter((c) => c.entry === entry).map((c) => [c.name, c] as const))(
        '%s',
        async (_name, badCase) => {
          let outcome: unknown;
          try {
            await badCase.run(ctx);
            outcome = 'no error';
          } catch (error) {
            outcome = error;
          }
          expect(outcome).toBeInstanceOf(badCase.error);
          expect(outcome).toBeInstanceOf(DistributedLockError);
          expect((outcome as Error).name).toBe(badCase.error.name);
          expect((outcome as Error).message).toMatch(badCase.message);

          // Nothing stays locked: no claim holds the store, and the keys the cases use are free.
          await new Promise((resolve) => setImmediate(resolve));
          expect([...backend.held]).toEqual([]);
          for (const key of ['k', 'held', 'rw', 'released', 'lapsed', 'order:undefined', 'sku:a']) {
            const lock = await ctx.locks.tryAcquire(key);
            expect(lock).not.toBeNull();
            await lock!.release();
          }
          // No unhandled rejection, even a late one from a timer.
          await new Promise((resolve) => setTimeout(resolve, 5));
          expect(rejections).toEqual([]);
        },
      );
    });
  }
});
