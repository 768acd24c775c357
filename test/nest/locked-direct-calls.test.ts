import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Body, Controller, Get, Injectable, Logger, Param, Post, Query, type INestApplication, type LoggerService } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, InvalidLockArgumentError, Locked, LockService } from '../../lib/index.js';
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
  create(@Param('shop') shop: string, @Body() order: Order, @Query('dry') dry?: string): { shop: string; sku: string; key?: string; dry?: string } {
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
  create(@Param('shop') shop: string, @Body() order: Order, @Query('dry') dry?: string): { shop: string; sku: string; key?: string; dry?: string } {
    return { shop, sku: order.sku, dry };
  }

  @Get(':id')
  show(@Param('id') id: string) {
    return { id };
  }
}

@Injectable()
class Audit {
  /** A request template on a provider method: only a handler has a request. */
  @Locked('audit:{params.id}')
  async record(): Promise<string> {
    return 'recorded';
  }
}

describe('what Nest, Swagger and callers see of a @Locked handler', () => {
  it('the same parameter metadata, parameter types and length as the undecorated twin', () => {
    const routeArgs = (type: Function, method: string) => Object.values(Reflect.getMetadata(ROUTE_ARGS_METADATA, type, method) as object);
    for (const method of ['create', 'show']) {
      expect(routeArgs(LockedOrders, method)).toEqual(routeArgs(PlainOrders, method));
      expect(Reflect.getMetadata('design:paramtypes', LockedOrders.prototype, method)).toEqual(Reflect.getMetadata('design:paramtypes', PlainOrders.prototype, method));
      expect((LockedOrders.prototype as unknown as Record<string, Function>)[method]!.length).toBe((PlainOrders.prototype as unknown as Record<string, Function>)[method]!.length);
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
      const strip = (operation: unknown) => JSON.parse(JSON.stringify(operation).replace(/LockedOrders|PlainOrders/g, 'Orders')) as unknown;
      expect(strip(document.paths['/locked/{shop}'])).toEqual(strip(document.paths['/plain/{shop}']));
      expect(strip(document.paths['/locked/{id}'])).toEqual(strip(document.paths['/plain/{id}']));
      expect(document.paths['/locked/{shop}']!.post!.parameters!.map((parameter) => (parameter as { name: string }).name)).toEqual(['shop', 'dry']);
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
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      controllers: [LockedOrders],
      providers: [Audit],
    }).compile();
    app = moduleRef.createNestApplication({ logger: log });
    await app.init();
  });
  afterAll(() => app.close());
  afterEach(() => void (log.warnings.length = 0));

  it('a key naming request parts cannot be built: the method runs without the lock, as without interceptors, and one warning says so', async () => {
    const controller = app.get(LockedOrders);
    const events = collectEvents(app.get(LockService));
    await expect(controller.create('s1', { sku: 'a', quantity: 1 })).resolves.toEqual({ shop: 's1', sku: 'a', key: undefined, dry: undefined });
    await expect(controller.create('s1', { sku: 'a', quantity: 1 })).resolves.toMatchObject({ key: undefined });
    expect(events).toEqual([]);
    expect(log.warnings).toEqual([expect.stringContaining('LockedOrders.create was called directly')]);
  });

  it('a key naming the arguments is built from them: locked as on a provider method', async () => {
    await expect(app.get(LockedOrders).show('7')).resolves.toEqual({ id: '7', key: 'order:7' });
  });

  it('a provider method whose key names request parts is an error, not an unlocked run', async () => {
    await expect(app.get(Audit).record()).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('without any lock module (a unit test with mocked providers), a request key runs unlocked too', async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [LockedOrders], providers: [{ provide: LockService, useValue: { current: () => undefined } }] }).compile();
    await expect(moduleRef.get(LockedOrders).create('s2', { sku: 'b', quantity: 1 })).resolves.toMatchObject({ shop: 's2', sku: 'b' });
    await moduleRef.close();
  });
});
