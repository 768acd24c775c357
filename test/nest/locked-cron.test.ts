import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Cron, SchedulerRegistry, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';

// Never fires on its own in a test run: the test fires the jobs.
const JOB_OPTIONS = { disabled: true, waitForCompletion: true } as const;
const EVERY_NEW_YEAR = '0 0 1 1 *';

@Injectable()
class ReportJobs {
  readonly runs: { job: string; key: string | undefined }[] = [];

  constructor(private readonly locks: LockService) {}

  @Cron(EVERY_NEW_YEAR, { name: 'cron-outside', ...JOB_OPTIONS })
  @Locked({ key: 'jobs:report', onBusy: 'skip' })
  async cronOutside(): Promise<void> {
    this.runs.push({ job: 'cron-outside', key: this.locks.current()?.key });
  }

  @Locked({ key: 'jobs:report', onBusy: 'skip' })
  @Cron(EVERY_NEW_YEAR, { name: 'cron-inside', ...JOB_OPTIONS })
  async cronInside(): Promise<void> {
    this.runs.push({ job: 'cron-inside', key: this.locks.current()?.key });
  }
}

describe('@Locked on @nestjs/schedule jobs', () => {
  let app: INestApplicationContext;
  let jobs: ReportJobs;
  let locks: LockService;
  let registry: SchedulerRegistry;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [ReportJobs],
    }).compile();
    app = await moduleRef.init();
    jobs = app.get(ReportJobs);
    locks = app.get(LockService);
    registry = app.get(SchedulerRegistry);
  });
  afterAll(() => app.close());

  it.each(['cron-outside', 'cron-inside'])('%s is registered and, when fired, runs under the lock', async (name) => {
    jobs.runs.length = 0;
    await registry.getCronJob(name).fireOnTick();
    expect(jobs.runs).toEqual([{ job: name, key: 'jobs:report' }]);
  });

  it.each(['cron-outside', 'cron-inside'])('%s is skipped while another holder has the key', async (name) => {
    jobs.runs.length = 0;
    const holder = await locks.acquire('jobs:report');
    await registry.getCronJob(name).fireOnTick();
    expect(jobs.runs).toEqual([]);
    await holder.release();
    await registry.getCronJob(name).fireOnTick();
    expect(jobs.runs).toHaveLength(1);
  });

  it('calling the method directly behaves the same', async () => {
    jobs.runs.length = 0;
    const holder = await locks.acquire('jobs:report');
    await expect(jobs.cronInside()).resolves.toBeUndefined();
    await holder.release();
    await jobs.cronInside();
    expect(jobs.runs).toEqual([{ job: 'cron-inside', key: 'jobs:report' }]);
  });
});
