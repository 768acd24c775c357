import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { Locked } from '../../lib/index.js';
import { InventoryService } from '../inventory/inventory.service.js';

/** A delivery as the warehouse service sends it. */
export interface Delivery {
  readonly sku: string;
  readonly quantity: number;
}

/**
 * Deliveries from the warehouse, as TCP microservice messages: each adds to the stock under the
 * same SKU lock as the sales (`{data.sku}` is the message payload's `sku`), so a delivery and a
 * sale never interleave their read and write. Busy past waitMs → an RpcException with code LOCK_BUSY.
 */
@Controller()
export class WarehouseConsumer {
  constructor(private readonly inventory: InventoryService) {}

  @MessagePattern('warehouse.delivery')
  @Locked({ key: 'inventory:{data.sku}', leaseMs: 5_000, waitMs: 5_000 })
  receive(@Payload() delivery: Delivery): Promise<{ sku: string; stock: number }> {
    return this.inventory.receiveDelivery(delivery.sku, delivery.quantity);
  }
}
