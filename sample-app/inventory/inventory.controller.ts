import { Body, Controller, Get, HttpCode, Param, Post, Put, Sse, UseFilters, type MessageEvent } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { Locked } from '../../lib/index.js';
import { StaleFenceFilter } from './stale-fence.filter.js';
import { InventoryService, type SaleResult } from './inventory.service.js';

@UseFilters(StaleFenceFilter)
@Controller('inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Put(':sku')
  async restock(@Param('sku') sku: string, @Body() body: { stock: number }): Promise<{ sku: string; stock: number }> {
    await this.inventory.restock(sku, Number(body.stock));
    return { sku, stock: Number(body.stock) };
  }

  @Get(':sku')
  async get(@Param('sku') sku: string): Promise<{ sku: string; stock: number }> {
    return { sku, stock: await this.inventory.remaining(sku) };
  }

  /** One sale under the SKU's lock: busy past waitMs → 409 (LockBusyException, Retry-After when known); store down → 503. */
  @Post(':sku/sale')
  @HttpCode(200)
  @Locked({ key: 'inventory:{params.sku}', leaseMs: 5_000, waitMs: 5_000 })
  sell(@Param('sku') sku: string): Promise<SaleResult> {
    return this.inventory.sellOne(sku);
  }

  /** A stocktake as server-sent events; the SKU's lock is held until the stream ends (or the client leaves). */
  @Sse(':sku/stocktake')
  @Locked({ key: 'inventory:{params.sku}', leaseMs: 5_000, waitMs: 5_000 })
  stocktake(@Param('sku') sku: string): Observable<MessageEvent> {
    return this.inventory.stocktake(sku);
  }

  /** The same sale with no lock, to show the oversell. */
  @Post(':sku/sale-unguarded')
  @HttpCode(200)
  sellUnguarded(@Param('sku') sku: string): Promise<SaleResult> {
    return this.inventory.sellOneUnguarded(sku);
  }
}
