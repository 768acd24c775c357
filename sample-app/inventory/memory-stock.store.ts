import { StaleFenceError } from '../../lib/index.js';
import type { StockStore } from './stock.store.js';

/**
 * Stock in this process: for the in-memory lock backend (one instance). The library's guards are
 * for stores outside the process (SQL, Redis); here the check is a map of the highest fence
 * accepted per SKU, refusing a lower one with the library's StaleFenceError, as the guards do.
 */
export class MemoryStockStore implements StockStore {
  private readonly stock = new Map<string, number>();
  private readonly highestFence = new Map<string, number>();

  async set(sku: string, stock: number): Promise<void> {
    this.stock.set(sku, stock);
  }

  async get(sku: string): Promise<number> {
    return this.stock.get(sku) ?? 0;
  }

  async readFenced(sku: string, fence: number | undefined): Promise<number> {
    this.checkFence(sku, fence);
    return this.get(sku);
  }

  async writeFenced(sku: string, stock: number, fence: number | undefined): Promise<void> {
    this.checkFence(sku, fence);
    this.stock.set(sku, stock);
  }

  async close(): Promise<void> {}

  /** An equal fence is accepted (one holder reading, then writing); a lower one is refused. */
  private checkFence(sku: string, fence: number | undefined): void {
    if (fence === undefined) return;
    const highest = this.highestFence.get(sku) ?? -Infinity;
    if (fence < highest) throw new StaleFenceError(sku, fence, highest);
    this.highestFence.set(sku, fence);
  }
}
