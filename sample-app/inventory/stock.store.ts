import { ConflictException } from '@nestjs/common';

export const STOCK_STORE = Symbol('STOCK_STORE');
/** Prices: a fenced number per SKU too, written under locks of the second ('critical') lock store. */
export const PRICE_STORE = Symbol('PRICE_STORE');

/**
 * Where the stock lives. Fenced reads and writes carry the lock's fence: the store remembers the
 * highest fence it has seen per SKU and refuses older ones, so a holder that lost its lock
 * (paused past its lease while a newer holder went ahead) cannot write a stale value.
 */
export interface StockStore {
  set(sku: string, stock: number): Promise<void>;
  get(sku: string): Promise<number>;
  readFenced(sku: string, fence: number | undefined): Promise<number>;
  writeFenced(sku: string, stock: number, fence: number | undefined): Promise<void>;
  close(): Promise<void>;
}

/** A write or read with a fence older than one the store has already seen: the lock was lost. */
export class StaleFenceError extends ConflictException {
  constructor(sku: string, fence: number, newest: number) {
    super(`Stock of ${sku}: fence ${fence} is older than ${newest}; this holder lost its lock, nothing was written`);
  }
}
