import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  Locked,
  LockShuttingDownError,
  LockService,
  MemoryBackend,
  type Lock,
} from '../../lib/index.js';
import { deferred } from './nest-test-kit.js';

@Injectable()
class LongJob {
  entered = deferred<Lock>();
  finish = deferred();

  constructor(private readonly locks: LockService) {}

  @Locked('jobs:long')
  async run(): Promise<string> {
    this.entered.resolve(this.locks.current()!);
    await this.finish.promise;
    return 'finished';
  }
}

async function startApp(backend: MemoryBackend): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    // No drain: what close() does once the drain is over (graceful-shutdown.test.ts covers the drain).
    imports: [DistributedLockModule.forRoot({ backend, gracefulShutdownTimeoutMs: 0 })],
    providers: [LongJob],
  }).compile();
  return moduleRef.init();
}

describe('application shutdown', () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on('unhandledRejection', onRejection);
  });
  afterEach(() => {
    process.off('unhandledRejection', onRejection);
  });

  it('with gracefulShutdownTimeoutMs: 0, releases the locks an app holds, so another app sharing the store gets them at once', async () => {
    const shared = new MemoryBackend();
    const appA = await startApp(shared);
    const appB = await startApp(shared);
    const jobA = appA.get(LongJob);
    const running = jobA.run();
    const lockA = await jobA.entered.promise;
    const held = await appA.get(LockService).acquire('jobs:other');
    expect(await appB.get(LockService).tryAcquire('jobs:long')).toBeNull();

    await appA.close();

    expect(lockA.signal.aborted).toBe(true);
    expect(held.signal.aborted).toBe(true);
    const lockB = await appB.get(LockService).tryAcquire('jobs:long');
    expect(lockB).not.toBeNull();
    expect(lockB!.fence).toBeGreaterThan(lockA.fence!);
    // The method that was running when its app closed still settles normally.
    jobA.finish.resolve();
    await expect(running).resolves.toBe('finished');
    // A's engine is closed: new calls on its instances fail clearly.
    await expect(jobA.run()).rejects.toBeInstanceOf(LockShuttingDownError);
    await appB.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(rejections).toEqual([]);
  });

  it("does not close a backend object it was given: the other app's locks survive", async () => {
    const shared = new MemoryBackend();
    const appA = await startApp(shared);
    const appB = await startApp(shared);
    const lockB = await appB.get(LockService).acquire('jobs:b');
    await appA.close();
    const appC = await startApp(shared);
    expect(await appC.get(LockService).tryAcquire('jobs:b')).toBeNull();
    expect(lockB.signal.aborted).toBe(false);
    await appB.close();
    expect(await appC.get(LockService).tryAcquire('jobs:b')).not.toBeNull();
    await appC.close();
  });
});
