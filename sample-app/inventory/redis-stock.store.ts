import { Redis } from 'ioredis';
import { StaleFenceError, type StockStore } from './stock.store.js';

// Checks the fence and records it as the newest seen, atomically with the read or write.
// Returns the stock, or {-1, newest} when the fence is stale.
const FENCED = `
local newest = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
local fence = tonumber(ARGV[1])
if fence < newest then return {-1, newest} end
redis.call('HSET', KEYS[1], 'fence', fence)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'stock', ARGV[2]) end
return {tonumber(redis.call('HGET', KEYS[1], 'stock') or '0'), fence}
`;

/** Stock (or another fenced number per SKU, under another `namespace`) in Redis, shared by every instance of the app. */
export class RedisStockStore implements StockStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly namespace = 'sample:stock:',
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2 });
  }

  async set(sku: string, stock: number): Promise<void> {
    await this.redis.multi().del(this.key(sku)).hset(this.key(sku), 'stock', stock).exec();
  }

  async get(sku: string): Promise<number> {
    return Number((await this.redis.hget(this.key(sku), 'stock')) ?? 0);
  }

  async readFenced(sku: string, fence: number | undefined): Promise<number> {
    return fence === undefined ? this.get(sku) : this.fenced(sku, fence, '');
  }

  async writeFenced(sku: string, stock: number, fence: number | undefined): Promise<void> {
    if (fence === undefined) await this.redis.hset(this.key(sku), 'stock', stock);
    else await this.fenced(sku, fence, String(stock));
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  private async fenced(sku: string, fence: number, write: string): Promise<number> {
    const [stock, newest] = (await this.redis.eval(FENCED, 1, this.key(sku), fence, write)) as [number, number];
    if (stock === -1) throw new StaleFenceError(sku, fence, newest);
    return stock;
  }

  private key(sku: string): string {
    return `${this.namespace}${sku}`;
  }
}
