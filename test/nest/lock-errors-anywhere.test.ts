import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  ArgumentsHost,
  Catch,
  Controller,
  Get,
  HttpException,
  Injectable,
  Module,
  Param,
  type ExceptionFilter,
  type INestApplication,
  type LoggerService,
  type ModuleMetadata,
} from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { ClientProxyFactory, MessagePattern, Payload, Transport } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import {
  DistributedLockModule,
  InjectLockService,
  Locked,
  LockBusyException,
  LockedInterceptor,
  LockService,
  LockTimeoutError,
  StaleFenceError,
  StaleFenceException,
  type Lock,
} from '../../lib/index.js';
import { LockErrorsInterceptor } from '../../lib/nest/lock-errors.interceptor.js';
import { freePort } from '../harness/free-port.js';
import { RedisServer } from '../harness/redis-server.js';
import { PLATFORMS, type Platform } from './http-platform.js';
import { unreachableBackend } from './nest-test-kit.js';

/** Keeps what Nest logs as errors (an `ExceptionsHandler` log of a busy lock would land here). */
class ErrorLog implements LoggerService {
  readonly errors: unknown[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown): void {
    this.errors.push(message);
  }
}

@Injectable()
class OrderService {
  @Locked({ key: 'order:{0}', waitMs: 0 })
  async place(id: string): Promise<{ placed: string }> {
    return { placed: id };
  }
}

/** Plain routes (no `@Locked()`): the lock is taken in the service layer or by `LockService`. */
@Controller()
class OrderController {
  constructor(
    private readonly orders: OrderService,
    private readonly locks: LockService,
    @InjectLockService('down') private readonly down: LockService,
  ) {}

  @Get('service/:id')
  service(@Param('id') id: string) {
    return this.orders.place(id);
  }

  @Get('with-lock/:id')
  withLock(@Param('id') id: string) {
    return this.locks.withLock(`order:${id}`, () => ({ ok: true }), { waitMs: 0 });
  }

  @Get('acquire/:id')
  async acquire(@Param('id') id: string) {
    const lock = await this.locks.acquire(`order:${id}`, { waitMs: 0 });
    await lock.release();
    return { ok: true };
  }

  @Get('stale')
  stale() {
    throw new StaleFenceError('orders', 3, 5);
  }

  @Get('down')
  unavailable() {
    return this.down.withLock('anything', () => ({ ok: true }), { waitMs: 0 });
  }

  /** A `@Locked()` handler: answered by the interceptor `@Locked()` attaches, as before. */
  @Get('handler/:id')
  @Locked({ key: 'order:{params.id}', waitMs: 0 })
  handler(@Param('id') id: string) {
    return { handled: id };
  }
}

const stores = (options: { mapErrors?: boolean } = {}) => [
  DistributedLockModule.forRoot({ backend: { type: 'memory' }, ...options }),
  DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend }),
];

async function startApp(platform: Platform, metadata: ModuleMetadata, log = new ErrorLog()): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = platform === 'express' ? moduleRef.createNestApplication({ logger: log }) : moduleRef.createNestApplication(new FastifyAdapter(), { logger: log });
  await app.init();
  if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** Holds `key` in the app's default store until the returned lock is released. */
const hold = (app: INestApplication, key: string): Promise<Lock> => app.get(LockService).acquire(key, { waitMs: 0 });

describe.each(PLATFORMS)('lock errors thrown anywhere in a request, with only forRoot() (%s)', (platform) => {
  const log = new ErrorLog();
  let app: INestApplication;
  beforeAll(async () => {
    app = await startApp(platform, { imports: stores(), controllers: [OrderController], providers: [OrderService] }, log);
  });
  afterAll(() => app.close());
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each(['service', 'with-lock', 'acquire', 'handler'])('a busy lock from %s answers 409 LockBusyException naming the key, without an error log', async (route) => {
    const lock = await hold(app, `order:${route}`);
    try {
      const response = await request(app.getHttpServer()).get(`/${route}/${route}`).expect(409);
      expect(response.body).toMatchObject({ statusCode: 409, error: 'Conflict', key: `order:${route}`, message: expect.stringContaining('busy') });
    } finally {
      await lock.release();
    }
    await request(app.getHttpServer()).get(`/${route}/${route}`).expect(200);
    expect(log.errors).toEqual([]);
  });

  it('a stale fence answers 409 with the resource and both fences', async () => {
    const response = await request(app.getHttpServer()).get('/stale').expect(409);
    expect(response.body).toMatchObject({ statusCode: 409, error: 'Conflict', resource: 'orders', fence: 3, highest: 5 });
  });

  it('an unreachable store answers 503 without its own message', async () => {
    const response = await request(app.getHttpServer()).get('/down').expect(503);
    expect(response.body).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'The lock store is unavailable', retryAfter: 1 });
    expect(response.headers['retry-after']).toBe('1');
    expect(JSON.stringify(response.body)).not.toContain('ECONNREFUSED');
  });

  it('is one interceptor per application, however many stores', async () => {
    const intercept = jest.spyOn(LockErrorsInterceptor.prototype, 'intercept');
    await request(app.getHttpServer()).get('/service/once').expect(200);
    expect(intercept).toHaveBeenCalledTimes(1);
  });
});

describe('a busy lock from a service method on Redis', () => {
  let redis: RedisServer;
  let app: INestApplication;
  beforeAll(async () => {
    redis = await RedisServer.start();
    app = await startApp('express', {
      imports: [DistributedLockModule.forRoot({ backend: { type: 'redis', url: redis.url } }), DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend })],
      controllers: [OrderController],
      providers: [OrderService],
    });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  it('answers 409 with the key', async () => {
    const lock = await hold(app, 'order:R1');
    try {
      const response = await request(app.getHttpServer()).get('/service/R1').expect(409);
      expect(response.body).toMatchObject({ key: 'order:R1' });
    } finally {
      await lock.release();
    }
    await request(app.getHttpServer()).get('/service/R1').expect(200, { placed: 'R1' });
  });
});

@Catch(LockBusyException, StaleFenceException)
class LockAnswerFilter implements ExceptionFilter {
  catch(exception: LockBusyException | StaleFenceException, host: ArgumentsHost) {
    const response = host.switchToHttp().getResponse<{ status(code: number): { json(body: unknown): void } }>();
    response.status(429).json({ caught: exception.name });
  }
}

@Catch()
class CatchEverythingFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost) {
    const response = host.switchToHttp().getResponse<{ status(code: number): { json(body: unknown): void } }>();
    response.status(418).json({ caught: (exception as Error).constructor.name, cause: ((exception as Error).cause as Error | undefined)?.name });
  }
}

describe("users' own filters see the library's exception classes", () => {
  it.each([
    ['@Catch(LockBusyException, StaleFenceException)', LockAnswerFilter, 429],
    ['a catch-all @Catch()', CatchEverythingFilter, 418],
  ] as const)('%s', async (_name, filter, status) => {
    const app = await startApp('express', { imports: stores(), controllers: [OrderController], providers: [OrderService, { provide: APP_FILTER, useClass: filter }] });
    try {
      const lock = await hold(app, 'order:F1');
      try {
        const busy = await request(app.getHttpServer()).get('/service/F1').expect(status);
        expect(busy.body.caught).toBe('LockBusyException');
      } finally {
        await lock.release();
      }
      const stale = await request(app.getHttpServer()).get('/stale').expect(status);
      expect(stale.body.caught).toBe('StaleFenceException');
      if (filter === CatchEverythingFilter) expect(stale.body.cause).toBe('StaleFenceError');
    } finally {
      await app.close();
    }
  });
});

/** Customised answers, as the docs say: a subclass of LockedInterceptor registered with APP_INTERCEPTOR. */
@Injectable()
class LockedAs423 extends LockedInterceptor {
  protected override busyException(error: LockTimeoutError): unknown {
    return new HttpException({ custom: error.key }, 423);
  }
}

@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: LockedAs423 }] })
class CustomAnswersModule {}

describe('a subclass of LockedInterceptor registered with APP_INTERCEPTOR still decides the answers', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  // Nest runs global interceptors in the order of its modules: the root module's first, then its imports' in order.
  it.each([
    ['in the root module (it runs before the module\'s own)', (): ModuleMetadata => ({ imports: stores(), providers: [OrderService, { provide: APP_INTERCEPTOR, useClass: LockedAs423 }] }), ['LockedAs423', 'LockErrorsInterceptor']],
    ['in a module imported after DistributedLockModule (it runs after)', (): ModuleMetadata => ({ imports: [...stores(), CustomAnswersModule], providers: [OrderService] }), ['LockErrorsInterceptor', 'LockedAs423']],
  ])('%s', async (_where, metadata, order) => {
    const app = await startApp('express', { ...metadata(), controllers: [OrderController] });
    try {
      const calls: string[] = [];
      for (const type of [LockedAs423, LockErrorsInterceptor]) {
        const original = type.prototype.intercept;
        jest.spyOn(type.prototype, 'intercept').mockImplementation(function (this: LockedInterceptor, ...args) {
          calls.push(type.name);
          return original.apply(this, args);
        });
      }
      await request(app.getHttpServer()).get('/service/C0').expect(200);
      expect(calls).toEqual(order);
      const lock = await hold(app, 'order:C1');
      try {
        for (const route of ['service', 'with-lock', 'handler']) {
          await request(app.getHttpServer()).get(`/${route}/C1`).expect(423, { custom: 'order:C1' });
        }
      } finally {
        await lock.release();
      }
    } finally {
      await app.close();
    }
  });
});

describe('mapErrors: false', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const down = DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend, mapErrors: false });
  it.each([
    ['given to forRoot(): no interceptor at all', () => [DistributedLockModule.forRoot({ backend: { type: 'memory' }, mapErrors: false }), down], 0],
    ['in the argument of forRootAsync(): no interceptor at all', () => [DistributedLockModule.forRootAsync({ mapErrors: false, useFactory: () => ({ backend: { type: 'memory' } }) }), down], 0],
    ["from forRootAsync()'s factory: the interceptor steps aside", () => [DistributedLockModule.forRootAsync({ useFactory: () => ({ backend: { type: 'memory' as const }, mapErrors: false }) }), DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend })], 1],
  ])('%s; lock errors outside @Locked() handlers reach Nest (500), @Locked() handlers answer as before', async (_how, imports, intercepted) => {
    const log = new ErrorLog();
    const app = await startApp('express', { imports: imports(), controllers: [OrderController], providers: [OrderService] }, log);
    const intercept = jest.spyOn(LockErrorsInterceptor.prototype, 'intercept');
    try {
      const lock = await hold(app, 'order:O1');
      try {
        await request(app.getHttpServer()).get('/service/O1').expect(500);
        expect(intercept).toHaveBeenCalledTimes(intercepted);
        await request(app.getHttpServer()).get('/with-lock/O1').expect(500);
        await request(app.getHttpServer()).get('/handler/O1').expect(409);
      } finally {
        await lock.release();
      }
      await request(app.getHttpServer()).get('/stale').expect(500);
      expect(log.errors.length).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it('must be a boolean', async () => {
    const init = startApp('express', { imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, mapErrors: 'no' as unknown as boolean })] });
    await expect(init).rejects.toThrow('mapErrors must be a boolean');
    expect(() => DistributedLockModule.forRootAsync({ mapErrors: 1 as unknown as boolean, useFactory: () => ({ backend: { type: 'memory' } }) })).toThrow('mapErrors must be a boolean');
  });
});

@Controller()
class OrderConsumer {
  constructor(private readonly orders: OrderService) {}

  /** A message handler without `@Locked()`: the lock is in the service. */
  @MessagePattern('order.place')
  place(@Payload() id: string) {
    return this.orders.place(id);
  }

  @MessagePattern('order.stale')
  stale() {
    throw new StaleFenceError('orders', 1, 2);
  }
}

describe('lock errors thrown in a service method called by a TCP microservice handler', () => {
  it('answer LOCK_BUSY and LOCK_STALE_FENCE, without an error log', async () => {
    const log = new ErrorLog();
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({ imports: stores(), controllers: [OrderConsumer], providers: [OrderService] }).compile();
    const app = moduleRef.createNestApplication({ logger: log });
    app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }, { inheritAppConfig: true });
    await app.startAllMicroservices();
    await app.init();
    const client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    try {
      await client.connect();
      const lock = await hold(app, 'order:M1');
      try {
        const busy = await lastValueFrom(client.send('order.place', 'M1')).catch((error: unknown) => error);
        expect(busy).toMatchObject({ status: 'error', code: 'LOCK_BUSY', key: 'order:M1' });
      } finally {
        await lock.release();
      }
      await expect(lastValueFrom(client.send('order.place', 'M1'))).resolves.toEqual({ placed: 'M1' });
      const stale = await lastValueFrom(client.send('order.stale', {})).catch((error: unknown) => error);
      expect(stale).toMatchObject({ status: 'error', code: 'LOCK_STALE_FENCE', resource: 'orders', fence: 1, highest: 2 });
      expect(log.errors).toEqual([]);
    } finally {
      client.close();
      await app.close();
    }
  });
});
