import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { LockService, MemoryBackend, StaleFenceError } from '../../lib/index.js';
import { AppModule } from '../../sample-app/app.module.js';
import type { SampleConfig } from '../../sample-app/config.js';
import { PRICE_STORE, STOCK_STORE, type StockStore } from '../../sample-app/inventory/stock.store.js';
import { RedisServer } from '../harness/redis-server.js';

async function startApp(config: SampleConfig): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config)] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** `count` purchases at once, spread over the apps; returns how many sold. */
async function buyConcurrently(
  apps: INestApplication[],
  sku: string,
  endpoint: string,
  count: number,
): Promise<number> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      request(apps[i % apps.length].getHttpServer()).post(`/inventory/${sku}/${endpoint}`),
    ),
  );
  for (const response of responses) expect(response.status).toBe(200);
  return responses.filter((response) => response.body.sold === true).length;
}

async function remaining(app: INestApplication, sku: string): Promise<number> {
  return (await request(app.getHttpServer()).get(`/inventory/${sku}`).expect(200)).body.stock;
}

describe('sample inventory app', () => {
  describe('one instance on the memory backend', () => {
    const backend = new MemoryBackend();
    let app: INestApplication;

    beforeAll(async () => {
      // workMs: the time between reading and writing the stock, long enough that unguarded sales overlap.
      app = await startApp({ backend, workMs: 15 });
    });
    afterAll(() => app.close());

    it('never oversells through the locked endpoint', async () => {
      await request(app.getHttpServer()).put('/inventory/apple').send({ stock: 15 }).expect(200);
      const sold = await buyConcurrently([app], 'apple', 'sale', 40);
      expect(sold).toBe(15);
      expect(await remaining(app, 'apple')).toBe(0);
    });

    it('oversells through the unguarded twin (the bug the lock prevents)', async () => {
      await request(app.getHttpServer()).put('/inventory/pear').send({ stock: 15 }).expect(200);
      const sold = await buyConcurrently([app], 'pear', 'sale-unguarded', 40);
      const left = await remaining(app, 'pear');
      expect(sold - (15 - left)).toBeGreaterThan(0);
    });

    it("refuses the write of a holder that lost its lock: its fence is older than the new holder's", async () => {
      await request(app.getHttpServer()).put('/inventory/plum').send({ stock: 5 }).expect(200);
      const locks = app.get(LockService);
      // A holder that will be "paused" past its lease: its lease lapses in the store.
      const paused = await locks.acquire('inventory:plum');
      backend.expire('sample:lock:inventory:plum');
      // A newer holder sells one item meanwhile.
      const response = await request(app.getHttpServer()).post('/inventory/plum/sale').expect(200);
      expect(response.body).toMatchObject({ sold: true, remaining: 4 });
      expect(response.body.fence).toBeGreaterThan(paused.fence!);
      // The paused holder wakes up and tries to write what it read before: refused, stock intact.
      await expect(app.get<StockStore>(STOCK_STORE).writeFenced('plum', 4, paused.fence)).rejects.toBeInstanceOf(
        StaleFenceError,
      );
      expect(await remaining(app, 'plum')).toBe(4);
    });

    it("a handler's write refused by the fence check answers 409, and nothing is written", async () => {
      // A newer holder (a fence above any this backend has handed out yet) already wrote the price.
      await app.get<StockStore>(PRICE_STORE).writeFenced('quince', 7, Number.MAX_SAFE_INTEGER);
      const response = await request(app.getHttpServer()).put('/prices/quince').send({ price: 3 }).expect(409);
      expect(response.body.message).toMatch(/fence \d+ is older than 9007199254740991/);
      await request(app.getHttpServer()).get('/prices/quince').expect(200, { sku: 'quince', price: 7 });
    });
  });

  describe('two instances sharing Redis', () => {
    let redis: RedisServer;
    let apps: INestApplication[];

    beforeAll(async () => {
      redis = await RedisServer.start();
      const config: SampleConfig = { backend: { type: 'redis', url: redis.url }, redisUrl: redis.url, workMs: 15 };
      apps = [await startApp(config), await startApp(config)];
    }, 30_000);
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await redis.stop();
    });

    it('never oversells with purchases spread over both instances', async () => {
      await request(apps[0].getHttpServer()).put('/inventory/kiwi').send({ stock: 20 }).expect(200);
      const sold = await buyConcurrently(apps, 'kiwi', 'sale', 50);
      expect(sold).toBe(20);
      expect(await remaining(apps[1], 'kiwi')).toBe(0);
    });

    it('the Redis stock store (RedisFenceGuard) refuses a holder whose lock an operator force-released once a newer holder sold', async () => {
      await request(apps[0].getHttpServer()).put('/inventory/melon').send({ stock: 5 }).expect(200);
      const stale = await apps[0].get(LockService).acquire('inventory:melon');
      expect(await apps[1].get(LockService).forceRelease('inventory:melon', { reason: 'e2e: a stuck holder' })).toBe(
        true,
      );
      const response = await request(apps[1].getHttpServer()).post('/inventory/melon/sale').expect(200);
      expect(response.body).toMatchObject({ sold: true, remaining: 4 });
      expect(response.body.fence).toBeGreaterThan(stale.fence!);
      const store = apps[0].get<StockStore>(STOCK_STORE);
      await expect(store.writeFenced('melon', 4, stale.fence)).rejects.toMatchObject({
        name: 'StaleFenceError',
        fence: stale.fence,
        highest: response.body.fence,
      });
      await expect(store.readFenced('melon', stale.fence)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await remaining(apps[1], 'melon')).toBe(4);
      await stale.release().catch(() => undefined);
    });

    it('oversells through the unguarded twin', async () => {
      await request(apps[0].getHttpServer()).put('/inventory/lime').send({ stock: 20 }).expect(200);
      const sold = await buyConcurrently(apps, 'lime', 'sale-unguarded', 50);
      const left = await remaining(apps[0], 'lime');
      expect(sold - (20 - left)).toBeGreaterThan(0);
    });
  });
});
