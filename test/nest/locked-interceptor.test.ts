import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, HttpException, Param, type ExecutionContext, type INestApplication, type Type } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockModule, Locked, LockedInterceptor, LockService, type LockTimeoutError } from '../../lib/index.js';

@Controller('orders')
class OrdersController {
  constructor(private readonly locks: LockService) {}

  @Get(':id')
  @Locked({ key: 'order:{params.id}', waitMs: 0 })
  show(@Param('id') id: string) {
    return { id, key: this.locks.current()?.key };
  }

  /** Locks by hand: only a registered LockedInterceptor turns its busy lock into an HTTP answer. */
  @Get(':id/by-hand')
  async byHand(@Param('id') id: string) {
    return this.locks.withLock(`order:${id}`, () => ({ id }), { waitMs: 0 });
  }
}

/** Answers 423 Locked instead of 409, and locks per tenant: what a subclass may change. */
class TenantLockedInterceptor extends LockedInterceptor {
  protected override busyException(error: LockTimeoutError, _context: ExecutionContext): HttpException {
    return new HttpException({ statusCode: 423, busy: error.key }, 423);
  }

  protected override getRequest(context: ExecutionContext) {
    const { params } = context.switchToHttp().getRequest<{ params: Record<string, string> }>();
    return { params: { ...params, id: `tenant-a:${params.id}` } };
  }
}

describe('LockedInterceptor registered globally', () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  async function start(interceptor: Type<LockedInterceptor>): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      controllers: [OrdersController],
      providers: [{ provide: APP_INTERCEPTOR, useClass: interceptor }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    return app.init();
  }

  it('maps lock errors of handlers that use LockService directly, and @Locked ones the same way', async () => {
    const started = await start(LockedInterceptor);
    const holder = await started.get(LockService).acquire('order:1', { leaseMs: 1_500 });
    for (const path of ['/orders/1', '/orders/1/by-hand']) {
      const response = await request(started.getHttpServer()).get(path).expect(409);
      // This instance never released order:1: no idea when it frees, so no Retry-After (not the 1.5 s lease).
      expect(response.headers['retry-after']).toBeUndefined();
      expect(response.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Lock "order:1" is busy: not acquired within 0 ms', key: 'order:1' });
    }
    await holder.release();
  });

  it('a subclass decides the answer for @Locked handlers too, and the request parts their templates see', async () => {
    const started = await start(TenantLockedInterceptor);
    await request(started.getHttpServer()).get('/orders/2').expect(200, { id: '2', key: 'order:tenant-a:2' });
    const holder = await started.get(LockService).acquire('order:tenant-a:3');
    await request(started.getHttpServer()).get('/orders/3').expect(423, { statusCode: 423, busy: 'order:tenant-a:3' });
    await holder.release();
  });
});
