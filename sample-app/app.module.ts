import { Module, type DynamicModule, type OnApplicationShutdown, Inject } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { DistributedLockModule } from '../lib/index.js';
import type { SampleConfig } from './config.js';
import { InventoryController } from './inventory/inventory.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { MemoryStockStore } from './inventory/memory-stock.store.js';
import { RedisStockStore } from './inventory/redis-stock.store.js';
import { LeadershipController, StockWatcher } from './inventory/stock-watcher.js';
import { PRICE_STORE, STOCK_STORE, type StockStore } from './inventory/stock.store.js';
import { PricingController } from './pricing/pricing.controller.js';
import { JobsController } from './restock/jobs.controller.js';
import { RestockJob } from './restock/restock.job.js';
import { SAMPLE_CONFIG } from './sample-config.token.js';
import { WarehouseConsumer } from './warehouse/warehouse.consumer.js';

@Module({})
export class AppModule implements OnApplicationShutdown {
  constructor(
    @Inject(STOCK_STORE) private readonly stock: StockStore,
    @Inject(PRICE_STORE) private readonly prices: StockStore,
  ) {}

  static register(config: SampleConfig): DynamicModule {
    const fencedStore = (namespace: string) =>
      config.redisUrl ? new RedisStockStore(config.redisUrl, namespace) : new MemoryStockStore();
    return {
      module: AppModule,
      imports: [
        // Request locks (sales, deliveries, stocktakes). On shutdown the HTTP server stops accepting and
        // answers the requests it has received before the locks drain (one setting for the app).
        DistributedLockModule.forRoot({
          backend: config.backend,
          keyPrefix: 'sample:lock:',
          stopAcceptingOnShutdown: config.stopAccepting !== false,
        }),
        // A second store for the few locks that must never be wrong (prices): etcd or PostgreSQL in production.
        DistributedLockModule.forRoot({ name: 'critical', backend: config.backend, keyPrefix: 'sample:critical:' }),
        // The restock job runs on a schedule in every instance; @LockedJob lets one run each tick.
        ScheduleModule.forRoot(),
      ],
      controllers: [InventoryController, PricingController, WarehouseConsumer, JobsController, LeadershipController],
      providers: [
        InventoryService,
        RestockJob,
        StockWatcher,
        { provide: SAMPLE_CONFIG, useValue: config },
        { provide: STOCK_STORE, useFactory: () => fencedStore('sample:stock:') },
        { provide: PRICE_STORE, useFactory: () => fencedStore('sample:price:') },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.stock.close(), this.prices.close()]);
  }
}
