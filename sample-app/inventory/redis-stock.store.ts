import { Redis } from 'ioredis';
import { RedisFenceGuard } from '../../lib/index.js';
import type { StockStore } from './stock.store.js';

/** A fenced read: the guard checks and raises the SKU's fence, then this runs, atomically. */
const READ_STOCK = `return redis.call('HGET', KEYS[1], 'stock')`;

/**
 * Stock (or another fenced number per SKU, under another `namespace`) in Redis, shared by every
 * instance of the app. Fenced reads and writes go through the library's RedisFenceGuard: one
 * script each that refuses a fence below the highest accepted (StaleFenceError) or does the work.
 */
export class RedisStockStore implements StockStore {
  private readonly redis: Redis;
  private readonly guard: RedisFenceGuard;

  constructor(
    url: string,
    private readonly namespace = 'sample:stock:',
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2 });
    this.guard = new RedisFenceGuard(this.redis);
  }

  async set(sku: string, stock: number): Promise<void> {
    await this.redis.hset(this.key(sku), 'stock', stock);
  }

  async get(sku: string): Promise<number> {
    return Number((await this.redis.hget(this.key(sku), 'stock')) ?? 0);
  }

  async readFenced(sku: string, fence: number | undefined): Promise<number> {
    if (fence === undefined) return this.get(sku);
    return Number((await this.guard.eval(READ_STOCK, [this.key(sku)], [], fence)) ?? 0);
  }

  async writeFenced(sku: string, stock: number, fence: number | undefined): Promise<void> {
    if (fence === undefined) await this.set(sku, stock);
    else await this.guard.hset(this.key(sku), { stock: String(stock) }, fence);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  private key(sku: string): string {
    return `${this.namespace}${sku}`;
  }
}
