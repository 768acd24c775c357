import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockService,
  type LockInfo,
} from '../../lib/index.js';

@Injectable()
class OrderService {
  constructor(private readonly locks: LockService) {}

  /** Reports what an operator sees while the method holds its lock. */
  @Locked({ key: 'order:{0.id}', label: 'shipping order {0.id} for {0.customer}' })
  async ship(order: { id: number; customer: string }): Promise<LockInfo> {
    return this.locks.inspect(`order:${order.id}`);
  }

  @Locked({ key: 'refund:{0}', label: (id: string) => `refund ${id.toUpperCase()}` })
  async refund(id: string): Promise<LockInfo> {
    return this.locks.inspect(`refund:${id}`);
  }

  @Locked({ key: 'audit:{0}', label: 'audit of {1.missing}' })
  async audit(id: string): Promise<LockInfo> {
    return this.locks.inspect(`audit:${id}`);
  }
}

describe('@Locked({ label })', () => {
  let app: INestApplicationContext;
  let orders: OrderService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'api-7' })],
      providers: [OrderService],
    }).compile();
    app = await moduleRef.init();
    orders = app.get(OrderService);
  });
  afterAll(() => app.close());

  it("stores a template label from the method's arguments, next to the module's instance", async () => {
    const info = await orders.ship({ id: 42, customer: 'ACME' });
    expect(info.holders).toEqual([expect.objectContaining({ instance: 'api-7', label: 'shipping order 42 for ACME' })]);
  });

  it('takes a function label', async () => {
    expect((await orders.refund('r-1')).holders[0].label).toBe('refund R-1');
  });

  it('keeps the template text when it names something missing, and the call still runs', async () => {
    expect((await orders.audit('a-1')).holders[0].label).toBe('audit of {1.missing}');
  });

  it('refuses a label that is neither a template nor a function when the decorator is applied', () => {
    expect(() => {
      class Job {
        @Locked({ key: 'k', label: 5 as unknown as string })
        run(): void {}
      }
      return Job;
    }).toThrow(InvalidLockArgumentError);
  });
});
