import { Body, Controller, Get, Inject, Param, Put, UseFilters } from '@nestjs/common';
import { InjectLockService, Locked, LockService } from '../../lib/index.js';
import { StaleFenceFilter } from '../inventory/stale-fence.filter.js';
import { PRICE_STORE, type StockStore } from '../inventory/stock.store.js';

/**
 * Prices, locked in the app's second lock store, named 'critical': in production the few locks
 * that must never be wrong would live in etcd or PostgreSQL while request locks stay on Redis. The
 * demo points both stores at the same kind of backend.
 */
@UseFilters(StaleFenceFilter)
@Controller('prices')
export class PricingController {
  constructor(
    @Inject(PRICE_STORE) private readonly prices: StockStore,
    @InjectLockService('critical') private readonly critical: LockService,
  ) {}

  @Get(':sku')
  async get(@Param('sku') sku: string): Promise<{ sku: string; price: number }> {
    return { sku, price: await this.prices.get(sku) };
  }

  /** A price change under the SKU's price lock in the 'critical' store; the write carries that lock's fence. */
  @Put(':sku')
  @Locked({ key: 'price:{params.sku}', store: 'critical', waitMs: 2_000 })
  async set(
    @Param('sku') sku: string,
    @Body() body: { price: number },
  ): Promise<{ sku: string; price: number; fence?: number }> {
    const lock = this.critical.current()!;
    await this.prices.writeFenced(sku, Number(body.price), lock.fence);
    return { sku, price: Number(body.price), fence: lock.fence };
  }
}
