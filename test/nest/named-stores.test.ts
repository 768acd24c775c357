import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Param, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLockError,
  DistributedLockModule,
  getLockEngineToken,
  InjectLockService,
  InvalidLockArgumentError,
  Locked,
  LockEngine,
  LockHealthIndicator,
  LockService,
} from '../../lib/index.js';
import { collectEvents, RecordingBackend } from './nest-test-kit.js';

@Injectable()
class Payments {
  constructor(
    readonly locks: LockService,
    @InjectLockService('critical') readonly critical: LockService,
  ) {}

  @Locked({ key: 'payout:{0}', store: 'critical' })
  async payout(_id: string): Promise<string | undefined> {
    return this.critical.current()?.key;
  }

  @Locked('cart:{0}')
  async cart(_id: string): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  @Locked({ key: 'nowhere:{0}', store: 'missing' })
  async nowhere(_id: string): Promise<void> {}
}

@Controller('payouts')
class PayoutsController {
  constructor(@InjectLockService('critical') private readonly critical: LockService) {}

  @Get(':id')
  @Locked({ key: 'payout:{params.id}', store: 'critical' })
  show(@Param('id') id: string) {
    return { id, key: this.critical.current()?.key };
  }
}

describe('several lock stores in one application', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(imports: unknown[]): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: imports as never[],
      controllers: [PayoutsController],
      providers: [Payments, LockHealthIndicator],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    return app.init();
  }

  it('each store has its own LockService, engine and backend; @Locked({ store }) locks in the named one', async () => {
    const requests = new RecordingBackend();
    const critical = new RecordingBackend();
    const started = await start([
      DistributedLockModule.forRoot({ backend: requests, keyPrefix: 'r:' }),
      DistributedLockModule.forRoot({ name: 'critical', backend: critical, keyPrefix: 'c:' }),
    ]);
    const payments = started.get(Payments);
    expect([payments.locks.name, payments.critical.name]).toEqual(['default', 'critical']);
    expect(started.get<LockEngine>(getLockEngineToken('critical'))).not.toBe(
      started.get<LockEngine>(getLockEngineToken()),
    );
    await expect(payments.payout('1')).resolves.toBe('payout:1');
    await expect(payments.cart('2')).resolves.toBe('cart:2');
    await request(started.getHttpServer()).get('/payouts/3').expect(200, { id: '3', key: 'payout:3' });
    expect(critical.keys).toEqual(['c:payout:1', 'c:payout:3']);
    expect(requests.keys).toEqual(['r:cart:2']);
  });

  it("events, metrics labels and health results carry the store's name", async () => {
    const started = await start([
      DistributedLockModule.forRoot({ backend: { type: 'memory' } }),
      DistributedLockModule.forRootAsync({
        name: 'critical',
        useFactory: async () => ({ backend: { type: 'memory' } }),
      }),
    ]);
    const payments = started.get(Payments);
    const events = collectEvents(payments.locks);
    const criticalEvents = collectEvents(payments.critical);
    await payments.cart('a');
    await payments.payout('b');
    expect(events.map((event) => [event.type, event.store])).toEqual([
      ['acquired', 'default'],
      ['released', 'default'],
    ]);
    expect(criticalEvents.map((event) => [event.type, event.store])).toEqual([
      ['acquired', 'critical'],
      ['released', 'critical'],
    ]);
    const health = started.get(LockHealthIndicator);
    await expect(health.isHealthy('critical-locks', { store: 'critical' })).resolves.toMatchObject({
      'critical-locks': { status: 'up', backend: 'memory', store: 'critical' },
    });
    await expect(health.isHealthy('locks', { store: 'nope' })).resolves.toMatchObject({
      locks: { status: 'down', store: 'nope' },
    });
  });

  it('@Locked naming a store that is not running fails with an error that names it', async () => {
    const started = await start([
      DistributedLockModule.forRoot({ backend: { type: 'memory' }, gracefulShutdownTimeoutMs: 0 }),
      DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'memory' }, gracefulShutdownTimeoutMs: 0 }),
    ]);
    const failure = await started
      .get(Payments)
      .nowhere('1')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DistributedLockError);
    expect((failure as Error).message).toContain('no DistributedLockModule named "missing"');
  });

  it('refuses two global stores of one name at bootstrap, and a factory that renames its store', async () => {
    const twins = Test.createTestingModule({
      imports: [
        DistributedLockModule.forRoot({ name: 'x', backend: { type: 'memory' }, keyPrefix: 'a:' }),
        DistributedLockModule.forRoot({ name: 'x', backend: { type: 'memory' }, keyPrefix: 'b:' }),
      ],
    })
      .compile()
      .then((moduleRef) => moduleRef.init());
    await expect(twins).rejects.toThrow(/Two global DistributedLockModule stores are named "x"/);
    const renamed = Test.createTestingModule({
      imports: [
        DistributedLockModule.forRootAsync({
          name: 'x',
          useFactory: () => ({ name: 'y', backend: { type: 'memory' } }),
        }),
      ],
    }).compile();
    await expect(renamed).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('refuses a name that is not a non-empty string at the call', () => {
    expect(() => DistributedLockModule.forRoot({ name: '', backend: { type: 'memory' } })).toThrow(
      InvalidLockArgumentError,
    );
    expect(() =>
      DistributedLockModule.forRootAsync({
        name: 7 as unknown as string,
        useFactory: () => ({ backend: { type: 'memory' } }),
      }),
    ).toThrow(InvalidLockArgumentError);
  });

  it('shuts every store down: their held locks are released, their signals aborted', async () => {
    const started = await start([
      DistributedLockModule.forRoot({ backend: { type: 'memory' }, gracefulShutdownTimeoutMs: 0 }),
      DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'memory' }, gracefulShutdownTimeoutMs: 0 }),
    ]);
    const payments = started.get(Payments);
    const held = [await payments.locks.acquire('a'), await payments.critical.acquire('b')];
    await started.close();
    app = undefined;
    expect(held.map((lock) => lock.signal.aborted)).toEqual([true, true]);
  });
});
