import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { LockService, MemoryBackend } from '../../lib/index.js';
import { AppModule } from '../../sample-app/app.module.js';
import type { SampleConfig } from '../../sample-app/config.js';
import { STOCK_STORE, StaleFenceError, type StockStore } from '../../sample-app/inventory/stock.store.js';
import { RedisServer } from '../harness/redis-server.js';

async function startApp(config: SampleConfig): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config)] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** `count` purchases at once, spread over the apps; returns how many sold. */
async function buyConcurrently(apps: INestApplication[], sku: string, endpoint: string, count: number): Promise<number> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) => request(apps[i % apps.length]!.getHttpServer()).post(`/inventory/${sku}/${endpoint}`)),
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

    it('refuses the write of a holder that lost its lock: its fence is older than the new holder\'s', async () => {
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
      await expect(app.get<StockStore>(STOCK_STORE).writeFenced('plum', 4, paused.fence)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await remaining(app, 'plum')).toBe(4);
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
      await request(apps[0]!.getHttpServer()).put('/inventory/kiwi').send({ stock: 20 }).expect(200);
      const sold = await buyConcurrently(apps, 'kiwi', 'sale', 50);
      expect(sold).toBe(20);
      expect(await remaining(apps[1]!, 'kiwi')).toBe(0);
    });

    it('oversells through the unguarded twin', async () => {
      await request(apps[0]!.getHttpServer()).put('/inventory/lime').send({ stock: 20 }).expect(200);
      const sold = await buyConcurrently(apps, 'lime', 'sale-unguarded', 50);
      const left = await remaining(apps[0]!, 'lime');
      expect(sold - (20 - left)).toBeGreaterThan(0);
    });
  });
});
