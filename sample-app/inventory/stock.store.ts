export const STOCK_STORE = Symbol('STOCK_STORE');
/** Prices: a fenced number per SKU too, written under locks of the second ('critical') lock store. */
export const PRICE_STORE = Symbol('PRICE_STORE');

/**
 * Where the stock lives. Fenced reads and writes carry the lock's fence: the store remembers the
 * highest fence it has accepted per SKU and refuses older ones with the library's
 * `StaleFenceError`, so a holder that lost its lock (paused past its lease while a newer holder
 * went ahead) cannot write a stale value. Over HTTP the refusal is a 409 (stale-fence.filter.ts).
 */
export interface StockStore {
  set(sku: string, stock: number): Promise<void>;
  get(sku: string): Promise<number>;
  readFenced(sku: string, fence: number | undefined): Promise<number>;
  writeFenced(sku: string, stock: number, fence: number | undefined): Promise<void>;
  close(): Promise<void>;
}
