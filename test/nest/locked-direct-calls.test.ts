import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  Controller,
  Get,
  Logger,
  Param,
  Post,
  Query,
  type INestApplication,
  type LoggerService,
} from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, Locked, LockBusyException, LockService, LockTimeoutError } from '../../lib/index.js';
import { collectEvents } from './nest-test-kit.js';

class WarningLog implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

class Order {
  sku!: string;
  quantity!: number;
}

/** Two controllers alike but for @Locked: what Nest and Swagger see of them must be the same. */
@Controller('locked')
class LockedOrders {
  constructor(private readonly locks: LockService) {}

  @Post(':shop')
  @Locked('order:{params.shop}:{body.sku}')
  create(
    @Param('shop') shop: string,
    @Body() order: Order,
    @Query('dry') dry?: string,
  ): { shop: string; sku: string; key?: string; dry?: string } {
    return { shop, sku: order.sku, key: this.locks.current()?.key, dry };
  }

  @Get(':id')
  @Locked('order:{0}')
  show(@Param('id') id: string) {
    return { id, key: this.locks.current()?.key };
  }
}

@Controller('plain')
class PlainOrders {
  @Post(':shop')
  create(
    @Param('shop') shop: string,
    @Body() order: Order,
    @Query('dry') dry?: string,
  ): { shop: string; sku: string; key?: string; dry?: string } {
    return { shop, sku: order.sku, dry };
  }

  @Get(':id')
  show(@Param('id') id: string) {
    return { id };
  }
}

describe('what Nest, Swagger and callers see of a @Locked handler', () => {
  it('the same parameter metadata, parameter types and length as the undecorated twin', () => {
    const routeArgs = (type: Function, method: string) =>
      Object.values(Reflect.getMetadata(ROUTE_ARGS_METADATA, type, method) as object);
    for (const method of ['create', 'show']) {
      expect(routeArgs(LockedOrders, method)).toEqual(routeArgs(PlainOrders, method));
      expect(Reflect.getMetadata('design:paramtypes', LockedOrders.prototype, method)).toEqual(
        Reflect.getMetadata('design:paramtypes', PlainOrders.prototype, method),
      );
      expect((LockedOrders.prototype as unknown as Record<string, Function>)[method].length).toBe(
        (PlainOrders.prototype as unknown as Record<string, Function>)[method].length,
      );
    }
  });

  it('the same Swagger document, path for path', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      controllers: [LockedOrders, PlainOrders],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
      const strip = (operation: unknown) =>
        JSON.parse(JSON.stringify(operation).replace(/LockedOrders|PlainOrders/g, 'Orders')) as unknown;
      expect(strip(document.paths['/locked/{shop}'])).toEqual(strip(document.paths['/plain/{shop}']));
      expect(strip(document.paths['/locked/{id}'])).toEqual(strip(document.paths['/plain/{id}']));
      expect(
        document.paths['/locked/{shop}'].post!.parameters!.map((parameter) => (parameter as { name: string }).name),
      ).toEqual(['shop', 'dry']);
    } finally {
      await app.close();
    }
  });
});

describe('a @Locked handler called directly, as unit tests in the Nest docs do', () => {
  const log = new WarningLog();
  let app: INestApplication;
  beforeAll(async () => {
    Logger.overrideLogger(log);
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, waitMs: 0 })],
      controllers: [LockedOrders],
    }).compile();
    app = moduleRef.createNestApplication({ logger: log });
    await app.init();
  });
  afterAll(() => app.close());

  it('a key naming request parts is built from the arguments that carry them: the call is locked as the request would be, without a warning', async () => {
    const controller = app.get(LockedOrders);
    const events = collectEvents(app.get(LockService));
    await expect(controller.create('s1', { sku: 'a', quantity: 1 })).resolves.toEqual({
      shop: 's1',
      sku: 'a',
      key: 'order:s1:a',
      dry: undefined,
    });
    expect(events.map((event) => `${event.type} ${event.key}`)).toEqual(['acquired order:s1:a', 'released order:s1:a']);
    expect(log.warnings).toEqual([]);
  });

  it('a key naming the arguments is built from them: locked as on a provider method', async () => {
    await expect(app.get(LockedOrders).show('7')).resolves.toEqual({ id: '7', key: 'order:7' });
  });

  it('a busy lock is the answer a client would get (LockBusyException, its cause the LockTimeoutError)', async () => {
    const held = await app.get(LockService).acquire('order:s2:b');
    try {
      const error = await Promise.resolve(app.get(LockedOrders).create('s2', { sku: 'b', quantity: 1 })).catch(
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(LockBusyException);
      expect((error as LockBusyException).cause).toBeInstanceOf(LockTimeoutError);
    } finally {
      await held.release();
    }
  });
});

describe('a @Locked handler called directly with no lock module running', () => {
  it('without any lock module (a unit test with mocked providers), the call fails saying to import one', async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [LockedOrders],
      providers: [{ provide: LockService, useValue: { current: () => undefined } }],
    }).compile();
    await expect(moduleRef.get(LockedOrders).create('s2', { sku: 'b', quantity: 1 })).rejects.toThrow(
      'no DistributedLockModule is running',
    );
    await moduleRef.close();
  });
});
