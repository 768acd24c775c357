import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { LockService } from '../../lib/index.js';
import { SAMPLE_CONFIG } from '../sample-config.token.js';
import type { SampleConfig } from '../config.js';
import { STOCK_STORE, type StockStore } from './stock.store.js';

export interface SaleResult {
  readonly sold: boolean;
  readonly remaining: number;
  readonly fence?: number;
}

/** The read-modify-write of the seed articles: read the stock, do some work, write stock - 1. */
@Injectable()
export class InventoryService {
  constructor(
    @Inject(STOCK_STORE) private readonly stock: StockStore,
    @Inject(SAMPLE_CONFIG) private readonly config: SampleConfig,
    private readonly locks: LockService,
  ) {}

  restock(sku: string, stock: number): Promise<void> {
    return this.stock.set(sku, stock);
  }

  remaining(sku: string): Promise<number> {
    return this.stock.get(sku);
  }

  /** Sells one item. Must run under the SKU's lock; every store access carries the lock's fence. */
  async sellOne(sku: string): Promise<SaleResult> {
    const lock = this.locks.current();
    if (!lock) throw new Error('sellOne must run while holding the inventory lock');
    const stock = await this.stock.readFenced(sku, lock.fence);
    if (stock <= 0) return { sold: false, remaining: 0 };
    await delay(this.config.workMs);
    lock.signal.throwIfAborted(); // lost while working: do not even try to write
    await this.stock.writeFenced(sku, stock - 1, lock.fence);
    return { sold: true, remaining: stock - 1, fence: lock.fence };
  }

  /** The same sale without a lock: what goes wrong when instances race. */
  async sellOneUnguarded(sku: string): Promise<SaleResult> {
    const stock = await this.stock.get(sku);
    if (stock <= 0) return { sold: false, remaining: 0 };
    await delay(this.config.workMs);
    await this.stock.writeFenced(sku, stock - 1, undefined);
    return { sold: true, remaining: stock - 1 };
  }
}
