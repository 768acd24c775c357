import { afterEach, describe, expect, it } from '@jest/globals';
import { Get, Controller, Injectable, type INestApplicationContext } from '@nestjs/common';
import { Cron, SchedulerRegistry, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { firstValueFrom, filter } from 'rxjs';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  LeaderOnly,
  LeaderService,
  MemoryBackend,
  OnLeadership,
  type Leadership,
} from '../../lib/index.js';

const EVERY_NEW_YEAR = '0 0 1 1 *';

@Injectable()
class StockWatcher {
  readonly terms: Leadership[] = [];
  cronRuns = 0;

  @OnLeadership('stock')
  async watch(leadership: Leadership): Promise<void> {
    this.terms.push(leadership);
    await new Promise((resolve) => leadership.signal.addEventListener('abort', resolve, { once: true }));
  }

  @Cron(EVERY_NEW_YEAR, { name: 'restock', disabled: true, waitForCompletion: true })
  @LeaderOnly('stock')
  async restock(): Promise<string> {
    this.cronRuns++;
    return 'ran';
  }

  @LeaderOnly('reports')
  @Cron(EVERY_NEW_YEAR, { name: 'report', disabled: true })
  async report(): Promise<string> {
    return 'reported';
  }
}

@Controller('status')
class StatusController {
  @Get()
  @LeaderOnly('stock')
  status(): string {
    return 'leader';
  }
}

async function startInstance(backend: MemoryBackend, instance: string): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), DistributedLockModule.forRoot({ backend, instance, leaseMs: 2_000 })],
    providers: [StockWatcher],
    controllers: [StatusController],
  }).compile();
  return moduleRef.init();
}

const leads = (app: INestApplicationContext, name: string) =>
  firstValueFrom(
    app
      .get(LeaderService)
      .leadership$(name)
      .pipe(filter((change) => change.leader)),
  );

describe('@OnLeadership and @LeaderOnly', () => {
  const apps: INestApplicationContext[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('the leader runs the @OnLeadership task from bootstrap; @LeaderOnly runs only there; shutdown hands over at once', async () => {
    const backend = new MemoryBackend();
    const first = await startInstance(backend, 'first');
    apps.push(first);
    await leads(first, 'stock');
    const second = await startInstance(backend, 'second');
    apps.push(second);
    const [w1, w2] = [first.get(StockWatcher), second.get(StockWatcher)];
    expect(w1.terms).toHaveLength(1);
    expect(w2.terms).toHaveLength(0);

    await expect(w1.restock()).resolves.toBe('ran');
    await expect(w2.restock()).resolves.toBeUndefined();
    await second.get(SchedulerRegistry).getCronJob('restock').fireOnTick();
    expect(w2.cronRuns).toBe(0);
    await first.get(SchedulerRegistry).getCronJob('restock').fireOnTick();
    expect(w1.cronRuns).toBe(2);
    await expect(first.get(StatusController).status()).resolves.toBe('leader');
    await expect(second.get(StatusController).status()).resolves.toBeUndefined();
    expect(await second.get(LeaderService).leader('stock')).toEqual({ instance: 'first', term: w1.terms[0].term });

    // A @LeaderOnly name without an @OnLeadership task is campaigned for too.
    await leads(first, 'reports');
    await expect(w1.report()).resolves.toBe('reported');
    await expect(w2.report()).resolves.toBeUndefined();

    const secondLeads = leads(second, 'stock');
    apps.splice(0, 1);
    await first.close();
    expect(w1.terms[0].signal.aborted).toBe(true);
    await secondLeads;
    expect(w2.terms).toHaveLength(1);
    expect(w2.terms[0].term!).toBeGreaterThan(w1.terms[0].term!);
    await expect(w2.restock()).resolves.toBe('ran');
  });

  it('keeps the method metadata (cron registered, controller route) and refuses bad arguments', () => {
    expect(Reflect.getMetadata('path', StatusController.prototype.status)).toBe('/');
    expect(() => LeaderOnly('')(StockWatcher.prototype, 'x', { value: () => undefined })).toThrow(
      InvalidLockArgumentError,
    );
    expect(() => OnLeadership('x')(StockWatcher.prototype, 'x', { value: 42 } as PropertyDescriptor)).toThrow(
      /can only decorate methods/,
    );
    expect(() => OnLeadership('x', { store: '' })(StockWatcher.prototype, 'x', { value: () => undefined })).toThrow(
      /store must be/,
    );
  });
});
