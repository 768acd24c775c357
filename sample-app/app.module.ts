import { Module, type DynamicModule, type OnApplicationShutdown, Inject } from '@nestjs/common';
import { DistributedLockModule } from '../lib/index.js';
import type { SampleConfig } from './config.js';
import { InventoryController } from './inventory/inventory.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { MemoryStockStore } from './inventory/memory-stock.store.js';
import { RedisStockStore } from './inventory/redis-stock.store.js';
import { STOCK_STORE, type StockStore } from './inventory/stock.store.js';
import { SAMPLE_CONFIG } from './sample-config.token.js';

@Module({})
export class AppModule implements OnApplicationShutdown {
  constructor(@Inject(STOCK_STORE) private readonly stock: StockStore) {}

  static register(config: SampleConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [DistributedLockModule.forRoot({ backend: config.backend, keyPrefix: 'sample:lock:' })],
      controllers: [InventoryController],
      providers: [
        InventoryService,
        { provide: SAMPLE_CONFIG, useValue: config },
        { provide: STOCK_STORE, useFactory: () => (config.redisUrl ? new RedisStockStore(config.redisUrl) : new MemoryStockStore()) },
      ],
    };
  }

  onApplicationShutdown(): Promise<void> {
    return this.stock.close();
  }
}
