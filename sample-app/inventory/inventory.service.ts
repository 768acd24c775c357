import { Inject, Injectable, type MessageEvent } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { Observable } from 'rxjs';
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

  /** A delivery from the warehouse: adds to the stock. Must run under the SKU's lock, like a sale. */
  async receiveDelivery(sku: string, quantity: number): Promise<{ sku: string; stock: number }> {
    const lock = this.locks.current();
    if (!lock) throw new Error('receiveDelivery must run while holding the inventory lock');
    const stock = (await this.stock.readFenced(sku, lock.fence)) + quantity;
    await this.stock.writeFenced(sku, stock, lock.fence);
    return { sku, stock };
  }

  /**
   * A stocktake, streamed as server-sent events: counts the stock shelf by shelf (`shelves` steps
   * of `workMs`), then reports it. It runs after the handler returned, when the client subscribes,
   * and still holds the SKU's lock: no sale or delivery changes the stock while it is counted.
   */
  stocktake(sku: string, shelves = 3): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      const lock = this.locks.current();
      if (!lock) return subscriber.error(new Error('stocktake must run while holding the inventory lock'));
      const count = async () => {
        for (let shelf = 1; shelf <= shelves && !subscriber.closed; shelf++) {
          await delay(this.config.workMs);
          subscriber.next({ type: 'progress', data: { sku, shelf, of: shelves } });
        }
        subscriber.next({
          type: 'counted',
          data: { sku, stock: await this.stock.readFenced(sku, lock.fence), fence: lock.fence },
        });
        subscriber.complete();
      };
      count().catch((error: unknown) => subscriber.error(error));
    });
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
