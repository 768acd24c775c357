import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockService,
  LockTimeoutError,
  type Lock,
} from '../../lib/index.js';
import { deferred } from './nest-test-kit.js';

/** Counts the calls inside a method at once, and lets the test hold them there. */
class Gauge {
  inside = 0;
  max = 0;
  private gate = deferred();
  private entered: (() => void)[] = [];

  async run<T>(value: T): Promise<T> {
    this.max = Math.max(this.max, ++this.inside);
    for (const notify of this.entered.splice(0)) notify();
    await this.gate.promise;
    this.inside--;
    return value;
  }

  /** Resolves once `count` calls are inside. */
  async whenInside(count: number): Promise<void> {
    while (this.inside < count) await new Promise<void>((resolve) => this.entered.push(resolve));
  }

  open(): void {
    this.gate.resolve();
    this.gate = deferred();
  }
}

@Injectable()
class ReportService {
  readonly gauge = new Gauge();

  constructor(private readonly locks: LockService) {}

  @Locked({ key: 'reports', permits: 2, waitMs: 10_000 })
  async render(id: number): Promise<{ id: number; lock: Lock | undefined }> {
    const lock = this.locks.current();
    return { id: await this.gauge.run(id), lock };
  }

  @Locked({ key: 'exports:{0}', permits: 3, onBusy: 'skip' })
  async exportOrSkip(tenant: string): Promise<string> {
    return this.gauge.run(tenant);
  }
}

describe('@Locked({ key, permits }) on a provider method', () => {
  let app: INestApplicationContext;
  let service: ReportService;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [ReportService],
    }).compile();
    app = await moduleRef.init();
    service = app.get(ReportService);
    locks = app.get(LockService);
  });

  afterAll(() => app.close());

  it('runs at most `permits` calls at once; the others wait their turn and all complete', async () => {
    const calls = Array.from({ length: 6 }, (_, i) => service.render(i));
    await service.gauge.whenInside(2);
    // Two are inside and the other four queue: the semaphore is full for anyone else too.
    expect(await locks.tryAcquire('reports', { permits: 2 })).toBeNull();
    expect(service.gauge.inside).toBe(2);
    while (service.gauge.inside > 0) {
      service.gauge.open();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await Promise.all(calls);
    expect(results.map((result) => result.id)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(service.gauge.max).toBe(2);
    // Inside, current() is the call's permit; each call had its own.
    expect(new Set(results.map((result) => result.lock!.fence)).size).toBe(6);
  });

  it("with onBusy: 'skip', calls beyond the permits are skipped, per key", async () => {
    service.gauge.max = 0;
    const running = ['t1', 't1', 't1'].map((tenant) => service.exportOrSkip(tenant));
    await service.gauge.whenInside(3);
    expect(await service.exportOrSkip('t1')).toBeUndefined();
    const other = service.exportOrSkip('t2');
    await service.gauge.whenInside(4);
    service.gauge.open();
    expect(await Promise.all([...running, other])).toEqual(['t1', 't1', 't1', 't2']);
  });

  it('LockService.semaphore holds a permit that the decorated method counts', async () => {
    const permits = [await locks.semaphore('reports', 2), await locks.semaphore('reports', 2)];
    await expect(locks.semaphore('reports', 2, { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    const call = service.render(7);
    await permits[0].release();
    await service.gauge.whenInside(1);
    service.gauge.open();
    expect((await call).id).toBe(7);
    await permits[1].release();
  });

  it('refuses bad permits when the class is defined', () => {
    for (const permits of [0, -1, 1.5, Number.NaN, '3']) {
      const decorate = () => {
        class Jobs {
          run(): void {}
        }
        Locked({ key: 'x', permits: permits as number })(
          Jobs.prototype,
          'run',
          Object.getOwnPropertyDescriptor(Jobs.prototype, 'run')!,
        );
      };
      expect(decorate).toThrow(InvalidLockArgumentError);
      expect(decorate).toThrow('permits must be a whole number');
    }
  });
});
