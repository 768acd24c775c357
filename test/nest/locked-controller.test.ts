import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  HttpCode,
  Injectable,
  Param,
  Post,
  Query,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { collectEvents, deferred, unreachableBackend } from './nest-test-kit.js';

const Roles = (...roles: string[]) => SetMetadata('roles', roles);

/** Lets a request through only when the handler still carries its `roles` metadata. */
@Injectable()
class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    return this.reflector.get<string[] | undefined>('roles', context.getHandler())?.includes('clerk') === true;
  }
}

@Controller('inventory')
@UseGuards(RolesGuard)
class InventoryController {
  /** Set by a test to hold a request inside its handler. */
  gate: { entered: () => void; leave: Promise<void> } | undefined;
  runs = 0;

  constructor(private readonly locks: LockService) {}

  @Post(':sku/reserve')
  @Roles('clerk')
  @HttpCode(202)
  @Locked({ key: 'inventory:{params.sku}', waitMs: 0 })
  async reserve(@Param('sku') sku: string) {
    this.runs++;
    if (this.gate) {
      this.gate.entered();
      await this.gate.leave;
    }
    const lock = this.locks.current();
    return { sku, key: lock?.key, fence: lock?.fence };
  }

  @Locked({ key: 'inventory:{params.sku}', waitMs: 0 })
  @Roles('clerk')
  @Get(':sku')
  show(@Param('sku') sku: string) {
    this.runs++;
    return { sku, key: this.locks.current()?.key };
  }

  @Get(':sku/stock')
  @Roles('clerk')
  @Locked('inventory:{params.sku}:{query.warehouse}')
  stock(@Param('sku') _sku: string, @Query('warehouse') _warehouse?: string) {
    this.runs++;
    return { key: this.locks.current()?.key };
  }
}

async function startApp(backend: LockBackend | { type: 'memory' }): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ backend })],
    controllers: [InventoryController],
    providers: [RolesGuard],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  return app.init();
}

describe('@Locked on a controller handler', () => {
  let app: INestApplication;
  let controller: InventoryController;
  let locks: LockService;

  beforeAll(async () => {
    app = await startApp({ type: 'memory' });
    controller = app.get(InventoryController);
    locks = app.get(LockService);
  });
  afterAll(() => app.close());
  afterEach(() => {
    controller.gate = undefined;
    controller.runs = 0;
  });

  it('runs the handler under the lock named by the route parameter, once per request', async () => {
    const events = collectEvents(locks);
    const response = await request(app.getHttpServer()).post('/inventory/A1/reserve').expect(202);
    expect(response.body).toMatchObject({ sku: 'A1', key: 'inventory:A1' });
    expect(typeof response.body.fence).toBe('number');
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['inventory:A1']);
  });

  it('keeps route, guard and custom metadata whichever side of @Get the decorator is on', async () => {
    await request(app.getHttpServer()).get('/inventory/B2').expect(200, { sku: 'B2', key: 'inventory:B2' });
    const reflector = app.get(Reflector);
    expect(reflector.get('roles', InventoryController.prototype.show)).toEqual(['clerk']);
    expect(reflector.get('roles', InventoryController.prototype.reserve)).toEqual(['clerk']);
  });

  it("answers 409 Conflict with the key when the lock is busy, and Retry-After from this instance's short holds of it (1 s, not the 4.5 s lease)", async () => {
    await locks.withLock('inventory:C3', () => undefined);
    const holder = await locks.acquire('inventory:C3', { leaseMs: 4_500 });
    const response = await request(app.getHttpServer()).post('/inventory/C3/reserve').expect(409);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.body).toMatchObject({ statusCode: 409, key: 'inventory:C3' });
    expect(controller.runs).toBe(0);
    await holder.release();
    await request(app.getHttpServer()).post('/inventory/C3/reserve').expect(202);
  });

  it('two concurrent requests for one SKU: one gets in, the other gets 409; other SKUs are not blocked', async () => {
    const entered = deferred();
    const leave = deferred();
    controller.gate = { entered: entered.resolve, leave: leave.promise };
    const first = request(app.getHttpServer())
      .post('/inventory/D4/reserve')
      .then((response) => response);
    await Promise.race([
      entered.promise,
      first.then((response) => Promise.reject(new Error(`finished first: ${response.status}`))),
    ]);
    controller.gate = undefined;
    await request(app.getHttpServer()).post('/inventory/D4/reserve').expect(409);
    await request(app.getHttpServer()).get('/inventory/E5').expect(200);
    leave.resolve();
    expect((await first).status).toBe(202);
  });

  it('a template naming a missing request part answers 500, without running the handler or locking anything', async () => {
    const events = collectEvents(locks);
    await request(app.getHttpServer()).get('/inventory/F6/stock').expect(500);
    expect(controller.runs).toBe(0);
    expect(events).toEqual([]);
    await request(app.getHttpServer())
      .get('/inventory/F6/stock?warehouse=north')
      .expect(200, { key: 'inventory:F6:north' });
  });
});

describe('@Locked on a controller handler when the lock store is down', () => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await startApp(unreachableBackend);
  });
  afterAll(() => app.close());

  it("answers 503 Service Unavailable without the store's own message", async () => {
    const response = await request(app.getHttpServer()).post('/inventory/A1/reserve').expect(503);
    expect(response.body).toMatchObject({ statusCode: 503 });
    expect(JSON.stringify(response.body)).not.toContain('ECONNREFUSED');
    expect(app.get(InventoryController).runs).toBe(0);
  });
});
