import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  ArgumentsHost,
  Catch,
  Controller,
  Get,
  Injectable,
  Module,
  Param,
  UseGuards,
  type CanActivate,
  type ExceptionFilter,
  type INestApplication,
  type INestMicroservice,
  type LoggerService,
  type ModuleMetadata,
} from '@nestjs/common';
import { APP_FILTER, ApplicationConfig } from '@nestjs/core';
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
  LockErrorsFilter,
  LockService,
  StaleFenceError,
  StaleFenceException,
  type Lock,
} from '../../lib/index.js';
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

/** A guard that takes the lock (and gives it back): its lock errors are answered like the handler's. */
@Injectable()
class LockingGuard implements CanActivate {
  constructor(private readonly locks: LockService) {}
  async canActivate(): Promise<boolean> {
    const lock = await this.locks.acquire('order:guarded', { waitMs: 0 });
    await lock.release();
    return true;
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

  @Get('guarded/:id')
  @UseGuards(LockingGuard)
  guarded() {
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

  /** A `@Locked()` handler: it answers its own lock errors. */
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
  const app =
    platform === 'express'
      ? moduleRef.createNestApplication({ logger: log })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: log });
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
    app = await startApp(
      platform,
      { imports: stores(), controllers: [OrderController], providers: [OrderService] },
      log,
    );
  });
  afterAll(() => app.close());
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each(['service', 'with-lock', 'acquire', 'handler', 'guarded'])(
    'a busy lock from %s answers 409 LockBusyException naming the key, without an error log',
    async (route) => {
      const lock = await hold(app, `order:${route}`);
      try {
        const response = await request(app.getHttpServer()).get(`/${route}/${route}`).expect(409);
        expect(response.body).toMatchObject({
          statusCode: 409,
          error: 'Conflict',
          key: `order:${route}`,
          message: expect.stringContaining('busy'),
        });
      } finally {
        await lock.release();
      }
      await request(app.getHttpServer()).get(`/${route}/${route}`).expect(200);
      expect(log.errors).toEqual([]);
    },
  );

  it('a stale fence answers 409 with the resource and both fences', async () => {
    const response = await request(app.getHttpServer()).get('/stale').expect(409);
    expect(response.body).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      resource: 'orders',
      fence: 3,
      highest: 5,
    });
  });

  it('an unreachable store answers 503 without its own message', async () => {
    const response = await request(app.getHttpServer()).get('/down').expect(503);
    expect(response.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The lock store is unavailable',
      retryAfter: 1,
    });
    expect(response.headers['retry-after']).toBe('1');
    expect(JSON.stringify(response.body)).not.toContain('ECONNREFUSED');
  });

  it('is one exception filter per application, however many stores, and no interceptor: a call that does not throw runs none of it', async () => {
    const config = app.get(ApplicationConfig, { strict: false });
    expect(new Set(config.getGlobalFilters().filter((filter) => filter instanceof LockErrorsFilter)).size).toBe(1);
    expect(config.getGlobalInterceptors()).toEqual([]);
    expect(Reflect.getMetadata('__interceptors__', OrderController.prototype.handler)).toBeUndefined();
    const caught = jest.spyOn(LockErrorsFilter.prototype, 'catch');
    await request(app.getHttpServer()).get('/service/once').expect(200);
    await request(app.getHttpServer()).get('/handler/once').expect(200);
    expect(caught).not.toHaveBeenCalled();
  });
});

describe('a busy lock from a service method on Redis', () => {
  let redis: RedisServer;
  let app: INestApplication;
  beforeAll(async () => {
    redis = await RedisServer.start();
    app = await startApp('express', {
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'redis', url: redis.url } }),
        DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend }),
      ],
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
    response.status(418).json({
      caught: (exception as Error).constructor.name,
      cause: ((exception as Error).cause as Error | undefined)?.name,
    });
  }
}

describe("users' own filters see the library's exception classes", () => {
  it.each([
    ['@Catch(LockBusyException, StaleFenceException)', LockAnswerFilter, 429],
    ['a catch-all @Catch()', CatchEverythingFilter, 418],
  ] as const)('%s', async (_name, filter, status) => {
    const app = await startApp('express', {
      imports: stores(),
      controllers: [OrderController],
      providers: [OrderService, { provide: APP_FILTER, useClass: filter }],
    });
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

/** A user's own answer to busy locks: 423 with the key, and the header the library's filter set before it. */
@Catch(LockBusyException)
class BusyAs423 implements ExceptionFilter {
  catch(exception: LockBusyException, host: ArgumentsHost) {
    const response = host
      .switchToHttp()
      .getResponse<{ getHeader(name: string): unknown; status(code: number): { json(body: unknown): void } }>();
    response.status(423).json({ custom: exception.key, retryAfterHeader: response.getHeader('Retry-After') ?? null });
  }
}

@Module({ providers: [{ provide: APP_FILTER, useClass: BusyAs423 }] })
class CustomAnswersModule {}

describe('a filter of yours among the global ones receives the exception classes, wherever Nest ranks it', () => {
  // Nest tries global filters last registered first: app.useGlobalFilters() after every APP_FILTER, and those of the modules it scans later before those of the root module.
  it.each([
    [
      'APP_FILTER in the root module',
      (): ModuleMetadata => ({
        imports: stores(),
        providers: [OrderService, { provide: APP_FILTER, useClass: BusyAs423 }],
      }),
      false,
    ],
    [
      'APP_FILTER in a module imported after DistributedLockModule',
      (): ModuleMetadata => ({ imports: [...stores(), CustomAnswersModule], providers: [OrderService] }),
      false,
    ],
    ['app.useGlobalFilters()', (): ModuleMetadata => ({ imports: stores(), providers: [OrderService] }), true],
  ])('%s', async (_where, metadata, useGlobalFilters) => {
    const moduleRef = await Test.createTestingModule({ ...metadata(), controllers: [OrderController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    if (useGlobalFilters) app.useGlobalFilters(new BusyAs423());
    await app.init();
    try {
      await app.get(LockService).withLock('order:C1', () => undefined);
      const lock = await hold(app, 'order:C1');
      try {
        for (const route of ['service', 'with-lock', 'handler']) {
          await request(app.getHttpServer())
            .get(`/${route}/C1`)
            .expect(423, { custom: 'order:C1', retryAfterHeader: '1' });
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
    [
      'given to forRoot()',
      () => [DistributedLockModule.forRoot({ backend: { type: 'memory' }, mapErrors: false }), down],
    ],
    [
      'in the argument of forRootAsync()',
      () => [
        DistributedLockModule.forRootAsync({ mapErrors: false, useFactory: () => ({ backend: { type: 'memory' } }) }),
        down,
      ],
    ],
    [
      "from forRootAsync()'s factory",
      () => [
        DistributedLockModule.forRootAsync({
          useFactory: () => ({ backend: { type: 'memory' as const }, mapErrors: false }),
        }),
        DistributedLockModule.forRoot({ name: 'down', backend: unreachableBackend }),
      ],
    ],
  ])(
    '%s: lock errors outside @Locked() handlers reach Nest (500), @Locked() handlers answer as before',
    async (_how, imports) => {
      const log = new ErrorLog();
      const app = await startApp(
        'express',
        { imports: imports(), controllers: [OrderController], providers: [OrderService] },
        log,
      );
      try {
        const lock = await hold(app, 'order:O1');
        try {
          await request(app.getHttpServer()).get('/service/O1').expect(500);
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
    },
  );

  it('must be a boolean', async () => {
    const init = startApp('express', {
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, mapErrors: 'no' as unknown as boolean })],
    });
    await expect(init).rejects.toThrow('mapErrors must be a boolean');
    expect(() =>
      DistributedLockModule.forRootAsync({
        mapErrors: 1 as unknown as boolean,
        useFactory: () => ({ backend: { type: 'memory' } }),
      }),
    ).toThrow('mapErrors must be a boolean');
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
  /** A hybrid application (an HTTP app with a microservice connected), or a microservice application alone. */
  async function startService(
    kind: 'hybrid' | 'microservice',
    port: number,
    log: ErrorLog,
  ): Promise<INestApplication | INestMicroservice> {
    const moduleRef = await Test.createTestingModule({
      imports: stores(),
      controllers: [OrderConsumer],
      providers: [OrderService],
    }).compile();
    const options = { transport: Transport.TCP, options: { host: '127.0.0.1', port } } as const;
    if (kind === 'microservice') {
      const service = moduleRef.createNestMicroservice(options);
      service.useLogger(log);
      await service.listen();
      return service;
    }
    const app = moduleRef.createNestApplication({ logger: log });
    app.connectMicroservice(options, { inheritAppConfig: true });
    await app.startAllMicroservices();
    return app.init();
  }

  it.each(['hybrid', 'microservice'] as const)(
    'answer LOCK_BUSY and LOCK_STALE_FENCE, without an error log (%s application)',
    async (kind) => {
      const log = new ErrorLog();
      const port = await freePort();
      const app = await startService(kind, port, log);
      const client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
      try {
        await client.connect();
        const lock = await app.get(LockService).acquire('order:M1', { waitMs: 0 });
        try {
          const busy = await lastValueFrom(client.send('order.place', 'M1')).catch((error: unknown) => error);
          expect(busy).toMatchObject({ status: 'error', code: 'LOCK_BUSY', key: 'order:M1' });
        } finally {
          await lock.release();
        }
        await expect(lastValueFrom(client.send('order.place', 'M1'))).resolves.toEqual({ placed: 'M1' });
        const stale = await lastValueFrom(client.send('order.stale', {})).catch((error: unknown) => error);
        expect(stale).toMatchObject({
          status: 'error',
          code: 'LOCK_STALE_FENCE',
          resource: 'orders',
          fence: 1,
          highest: 2,
        });
        expect(log.errors).toEqual([]);
      } finally {
        client.close();
        await app.close();
      }
    },
  );
});
