import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Cron, Interval, SchedulerRegistry, ScheduleModule, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockedJob,
  LockService,
  subscribeLockMetrics,
  type LockEvent,
} from '../../lib/index.js';

// Never fires on its own in a test run: the test fires the cron jobs.
const JOB_OPTIONS = { disabled: true, waitForCompletion: true } as const;
const EVERY_NEW_YEAR = '0 0 1 1 *';
const HOLD_MS = 400;

@Injectable()
class StockJobs {
  readonly runs: { job: string; key: string | undefined }[] = [];
  constructor(private readonly locks: LockService) {}

  private note(job: string): void {
    this.runs.push({ job, key: this.locks.current()?.key });
  }

  @Cron(EVERY_NEW_YEAR, { name: 'job-below-cron', ...JOB_OPTIONS })
  @LockedJob({ minHoldMs: HOLD_MS })
  async restockBelow(): Promise<void> {
    this.note('restockBelow');
  }

  @LockedJob({ minHoldMs: HOLD_MS })
  @Cron(EVERY_NEW_YEAR, { name: 'job-above-cron', ...JOB_OPTIONS })
  async restockAbove(): Promise<void> {
    this.note('restockAbove');
  }

  // Every 50 ms, held 1 s at least: the first call runs, the next ones skip.
  @Interval('interval-below', 50)
  @LockedJob()
  async pollBelow(): Promise<void> {
    this.note('pollBelow');
  }

  @LockedJob()
  @Interval('interval-above', 50)
  async pollAbove(): Promise<void> {
    this.note('pollAbove');
  }

  @Timeout('timeout-below', 20)
  @LockedJob({ key: 'warm-up' })
  async warmUpBelow(): Promise<void> {
    this.note('warmUpBelow');
  }

  @LockedJob({ key: 'warm-up' })
  @Timeout('timeout-above', 20)
  async warmUpAbove(): Promise<void> {
    this.note('warmUpAbove');
  }

  /** A plain provider method that another scheduler (node-cron, a BullMQ repeatable job) calls. */
  @LockedJob({ minHoldMs: 200, maxHoldMs: 300, leaseMs: 300 })
  async hangs(): Promise<string> {
    const signal = this.locks.current()!.signal;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return (signal.reason as Error).message;
  }

  @Locked()
  async defaultKey(): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  @Locked({ onBusy: 'skip', leaseMs: 2_000 })
  async defaultKeySkipping(): Promise<string | undefined> {
    return this.locks.current()?.key;
  }
}

function eventOf(events: Observable<LockEvent>, type: LockEvent['type'], key: string): Promise<LockEvent> {
  return firstValueFrom(events.pipe(filter((event) => event.type === type && event.key === key)));
}

describe('@LockedJob and the default key', () => {
  let app: INestApplicationContext;
  let jobs: StockJobs;
  let locks: LockService;
  let registry: SchedulerRegistry;
  let pollEvents: Promise<LockEvent[]>;
  let warmUpEvents: Promise<LockEvent[]>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [StockJobs],
    }).compile();
    locks = moduleRef.get(LockService);
    // Subscribed before the schedule starts: intervals and timeouts fire right after init.
    pollEvents = Promise.all(
      ['StockJobs.pollBelow', 'StockJobs.pollAbove'].flatMap((key) => [
        eventOf(locks.events, 'acquired', key),
        eventOf(locks.events, 'skipped', key),
      ]),
    );
    warmUpEvents = Promise.all([
      eventOf(locks.events, 'acquired', 'warm-up'),
      eventOf(locks.events, 'skipped', 'warm-up'),
    ]);
    app = await moduleRef.init();
    jobs = app.get(StockJobs);
    registry = app.get(SchedulerRegistry);
  });
  afterAll(() => app.close());

  it('@Locked() with no key locks ClassName.methodName', async () => {
    await expect(jobs.defaultKey()).resolves.toBe('StockJobs.defaultKey');
    const holder = await locks.acquire('StockJobs.defaultKeySkipping');
    await expect(jobs.defaultKeySkipping()).resolves.toBeUndefined();
    await holder.release();
    await expect(jobs.defaultKeySkipping()).resolves.toBe('StockJobs.defaultKeySkipping');
  });

  it.each([
    ['job-below-cron', 'restockBelow'],
    ['job-above-cron', 'restockAbove'],
  ])(
    '%s (@Cron in either order): runs under ClassName.methodName, then the tick stays taken for minHoldMs',
    async (name, method) => {
      const key = `StockJobs.${method}`;
      const runs = () => jobs.runs.filter((run) => run.job === method);
      const skipped = eventOf(locks.events, 'skipped', key);
      const calledAt = performance.now();
      await registry.getCronJob(name).fireOnTick();
      expect(runs()).toEqual([{ job: method, key }]);
      // A late instance firing the same tick (here: the same job again) skips it, and says so.
      await registry.getCronJob(name).fireOnTick();
      expect(runs()).toHaveLength(1);
      const event = await skipped;
      expect(event).toMatchObject({
        type: 'skipped',
        key,
        method: `StockJobs.${method}`,
        instance: expect.any(String),
        store: 'default',
      });
      // The key frees by itself once minHoldMs has passed since the job started.
      const next = await locks.acquire(key, { waitMs: 5_000 });
      expect(performance.now() - calledAt).toBeGreaterThanOrEqual(HOLD_MS);
      await next.release();
      await registry.getCronJob(name).fireOnTick();
      expect(runs()).toHaveLength(2);
    },
  );

  it('@Interval and @Timeout in either order run through the lock (acquired, then skipped while held)', async () => {
    expect(registry.getIntervals().sort()).toEqual(['interval-above', 'interval-below']);
    const [belowAcquired, belowSkipped, aboveAcquired, aboveSkipped] = await pollEvents;
    expect([belowAcquired.type, belowSkipped.type, aboveAcquired.type, aboveSkipped.type]).toEqual([
      'acquired',
      'skipped',
      'acquired',
      'skipped',
    ]);
    // Both timeouts share the key 'warm-up': one ran, the other skipped.
    await warmUpEvents;
    expect(jobs.runs.filter((run) => run.key === 'warm-up').map((run) => run.job)).toHaveLength(1);
  });

  it('skipped calls are counted in the Prometheus metrics (skipped_total)', async () => {
    // The interval jobs would add their own skips.
    for (const name of registry.getIntervals()) registry.deleteInterval(name);
    const metrics = new Registry();
    const subscription = await subscribeLockMetrics(locks.events, metrics);
    const holder = await locks.acquire('StockJobs.defaultKeySkipping');
    await jobs.defaultKeySkipping();
    await jobs.defaultKeySkipping();
    await holder.release();
    subscription.unsubscribe();
    expect(await metrics.metrics()).toMatch(/distributed_lock_skipped_total\{backend="memory",store="default"\} 2/);
  });

  it('maxHoldMs on a job called by any scheduler: a hung job is told (LockLostError) and the key frees', async () => {
    const message = await jobs.hangs();
    expect(message).toContain('maxHoldMs (300 ms)');
    const next = await locks.acquire('StockJobs.hangs', { waitMs: 5_000 });
    await next.release();
  });
});

describe('@Locked() / @LockedJob() bad input', () => {
  const define = (decorator: MethodDecorator, name: string | symbol = 'run', className = 'Jobs') => {
    const holder = { [className]: class {} }[className];
    const descriptor: PropertyDescriptor = { value: function run() {}, writable: true, configurable: true };
    decorator(holder.prototype, name, descriptor);
  };

  it('refuses the default key on a symbol-named method or an anonymous class', () => {
    expect(() => define(Locked(), Symbol('run'))).toThrow(InvalidLockArgumentError);
    expect(() => define(Locked(), 'run', '')).toThrow(/default key 'ClassName.methodName' is ambiguous/);
    expect(() => define(LockedJob(), Symbol('run'))).toThrow(InvalidLockArgumentError);
  });

  it.each([
    [
      'an unknown option',
      () => LockedJob({ onBusy: 'throw' } as never),
      /@LockedJob\(\) on Jobs.run: unknown option "onBusy"/,
    ],
    ['a non-object', () => LockedJob('nightly' as never), /takes an options object/],
    [
      'minHoldMs above maxHoldMs',
      () => LockedJob({ minHoldMs: 2_000, maxHoldMs: 1_000 }),
      /minHoldMs \(2000\) must not exceed maxHoldMs \(1000\)/,
    ],
    ['a negative minHoldMs', () => Locked({ minHoldMs: -1 }), /minHoldMs must be a finite number/],
    ['a NaN maxHoldMs', () => Locked({ key: 'k', maxHoldMs: Number.NaN }), /maxHoldMs must be a finite number/],
  ])('refuses %s when the class is defined', (_name, decorator, message) => {
    expect(() => define(decorator())).toThrow(message);
  });
});
