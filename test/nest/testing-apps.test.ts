import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Module, Param, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable, of } from 'rxjs';
import request from 'supertest';
import {
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DistributedLockModule,
  Locked,
  LockedJob,
  LockService,
  LockTimeoutError,
} from '../../lib/index.js';

@Injectable()
class Checkout {
  @Locked({ key: 'cart:{0}', waitMs: 60_000 })
  async pay(cart: string) {
    return { paid: cart };
  }

  /** A provider method that returns a stream: its lock ends when the method returns, and a warning says so. */
  @Locked('cart-feed')
  feed(): Observable<string> {
    return of('a', 'b');
  }
}

@Controller()
class CheckoutController {
  constructor(private readonly checkout: Checkout) {}

  @Get('pay/:cart')
  pay(@Param('cart') cart: string) {
    return this.checkout.pay(cart);
  }

  @Get('refund/:cart')
  @Locked({ key: 'cart:{params.cart}' })
  refund(@Param('cart') cart: string) {
    return { refunded: cart };
  }
}

/** The application as it ships: a Redis store nobody starts in this test, and long waits. */
@Module({
  imports: [DistributedLockModule.forRoot({ backend: { type: 'redis', url: 'redis://127.0.0.1:1' }, waitMs: 30_000 })],
  controllers: [CheckoutController],
  providers: [Checkout],
})
class AppModule {}

describe('a test module caps every wait with maxWaitMs (overrideProvider of the options)', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(DISTRIBUTED_LOCK_MODULE_OPTIONS)
      .useValue({ backend: { type: 'memory' }, maxWaitMs: 50 })
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(() => app?.close());

  it("caps a decorator's waitMs: a busy service method answers 409 after 50 ms, not 60 s", async () => {
    const lock = await app.get(LockService).acquire('cart:1');
    try {
      const response = await request(app.getHttpServer()).get('/pay/1').expect(409);
      expect(response.body.message).toContain('not acquired within 50 ms');
    } finally {
      await lock.release();
    }
  });

  it("caps the module's waitMs and a call's own", async () => {
    const locks = app.get(LockService);
    const lock = await locks.acquire('cart:2');
    try {
      await expect(locks.acquire('cart:2')).rejects.toMatchObject({ waitMs: 50 });
      const error = await locks.acquire('cart:2', { waitMs: 60_000 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect(error).toMatchObject({ waitMs: 50 });
    } finally {
      await lock.release();
    }
  });
});

class WarningLog implements LoggerService {
  readonly warnings: unknown[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(message);
  }
}

describe("the library's warnings and Nest's test logger", () => {
  it('reaches a logger given with setLogger() (the default test logger drops warnings)', async () => {
    const logger = new WarningLog();
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      controllers: [CheckoutController],
      providers: [Checkout],
    })
      .setLogger(logger)
      .compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    try {
      await expect(app.get(Checkout).feed()).resolves.toBeInstanceOf(Observable);
      expect(logger.warnings).toEqual([
        expect.stringContaining(
          '@Locked() on Checkout.feed (not a handler Nest called) returned an Observable or stream',
        ),
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('an application that never imported DistributedLockModule', () => {
  @Controller()
  class Orders {
    @Get()
    @Locked('orders')
    list() {
      return [];
    }
  }

  @Injectable()
  class Reports {
    @LockedJob()
    async nightly() {}
  }

  @Injectable()
  class Ledger {
    @Locked('ledger:{0}')
    async post(_account: string) {}
  }

  it.each([
    ['a @Locked() controller handler', { controllers: [Orders] }],
    ['a @LockedJob() provider method', { providers: [Reports] }],
    ['a @Locked() provider method', { providers: [Ledger] }],
  ])('fails app.init() naming the module: %s', async (_what, metadata) => {
    const moduleRef = await Test.createTestingModule(metadata).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow('does not import DistributedLockModule');
    await app.close();
  });
});
