import { StaleFenceError, type StockStore } from './stock.store.js';

/** Stock in this process: for the in-memory lock backend (one instance). */
export class MemoryStockStore implements StockStore {
  private readonly stock = new Map<string, number>();
  private readonly newestFence = new Map<string, number>();

  async set(sku: string, stock: number): Promise<void> {
    this.stock.set(sku, stock);
    this.newestFence.delete(sku);
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

  private checkFence(sku: string, fence: number | undefined): void {
    if (fence === undefined) return;
    const newest = this.newestFence.get(sku) ?? 0;
    if (fence < newest) throw new StaleFenceError(sku, fence, newest);
    this.newestFence.set(sku, fence);
  }
}
