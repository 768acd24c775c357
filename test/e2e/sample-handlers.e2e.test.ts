import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { getLockServiceToken, LockService, type LockEvent } from '../../lib/index.js';
import { AppModule } from '../../sample-app/app.module.js';
import { freePort } from '../harness/free-port.js';
import { openRequest } from '../nest/http-platform.js';

/** The sample app's stocktake (SSE), warehouse deliveries (a TCP microservice) and prices (a second lock store). */
describe('sample app: handlers of every kind under @Locked', () => {
  let app: INestApplication;
  let warehouse: ClientProxy;

  beforeAll(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.register({ backend: { type: 'memory' }, workMs: 20 })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.connectMicroservice(
      { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    warehouse = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await warehouse.connect();
  });
  afterAll(async () => {
    warehouse.close();
    await app.close();
  });

  const http = () => request(app.getHttpServer());

  it("a stocktake streams while it holds the SKU's lock: sales fired during it wait, so it counts the stock as it was", async () => {
    await http().put('/inventory/fig').send({ stock: 10 }).expect(200);
    const stocktake = await openRequest(app, '/inventory/fig/stocktake');
    await stocktake.waitFor('event: progress');
    const sales = Promise.all(Array.from({ length: 4 }, () => http().post('/inventory/fig/sale').expect(200)));
    const events = await stocktake.ended;
    expect(events).toContain('"shelf":3');
    expect(events).toMatch(/event: counted\nid: \d+\ndata: \{"sku":"fig","stock":10,/);
    expect((await sales).every((response) => response.body.sold === true)).toBe(true);
    await http().get('/inventory/fig').expect(200, { sku: 'fig', stock: 6 });
  });

  it('warehouse deliveries and sales of one SKU never interleave: the stock adds up exactly', async () => {
    await http().put('/inventory/date').send({ stock: 5 }).expect(200);
    const deliveries = Array.from({ length: 5 }, () =>
      lastValueFrom(warehouse.send('warehouse.delivery', { sku: 'date', quantity: 3 })),
    );
    const sales = Array.from({ length: 10 }, () =>
      http()
        .post('/inventory/date/sale')
        .then((response) => response.body as { sold: boolean }),
    );
    await Promise.all(deliveries);
    const sold = (await Promise.all(sales)).filter((sale) => sale.sold).length;
    await http()
      .get('/inventory/date')
      .expect(200, { sku: 'date', stock: 5 + 15 - sold });
  });

  it('prices are locked in the second store, named critical', async () => {
    const defaultEvents: LockEvent[] = [];
    const criticalEvents: LockEvent[] = [];
    app.get(LockService).events.subscribe((event) => defaultEvents.push(event));
    app.get<LockService>(getLockServiceToken('critical')).events.subscribe((event) => criticalEvents.push(event));
    const response = await http().put('/prices/fig').send({ price: 3 }).expect(200);
    expect(response.body).toMatchObject({ sku: 'fig', price: 3, fence: expect.any(Number) });
    await http().get('/prices/fig').expect(200, { sku: 'fig', price: 3 });
    expect(criticalEvents.map((event) => `${event.type} ${event.key} ${event.store}`)).toEqual([
      'acquired price:fig critical',
      'released price:fig critical',
    ]);
    // The restock job fires on its schedule in the default store meanwhile; no price lock is taken there.
    expect(defaultEvents.filter((event) => event.key.startsWith('price:'))).toEqual([]);
  });
});
