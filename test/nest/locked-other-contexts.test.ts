import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createParamDecorator, Injectable, type INestApplicationContext } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, Locked, LockService, LockTimeoutError } from '../../lib/index.js';

/** Like @Payload() of @nestjs/microservices: the message, the handler's first native argument. */
const Message = createParamDecorator((_data: unknown, context) => context.getArgByIndex(0));

@Injectable()
class OrderConsumer {
  constructor(private readonly locks: LockService) {}

  /** No parameter decorators: Nest hands it its native arguments (message, context). */
  @Locked({ key: 'order:{0.id}', waitMs: 0 })
  async created(message: { id: string }, context: unknown) {
    return { id: message.id, context, count: arguments.length, key: this.locks.current()?.key };
  }

  @Locked({ key: 'order:{0}', waitMs: 0 })
  async cancelled(@Message() id: string) {
    return { id, count: arguments.length, key: this.locks.current()?.key };
  }
}

/**
 * How microservice, WebSocket and GraphQL handlers are called: through Nest's ExternalContextCreator,
 * which fills parameter decorators (the hidden one of @Locked included) for another context type.
 */
describe('@Locked on rpc handlers', () => {
  let app: INestApplicationContext;
  let handler: (method: 'created' | 'cancelled') => (...args: unknown[]) => Promise<unknown>;

  beforeAll(async () => {
    app = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [OrderConsumer],
    })
      .compile()
      .then((moduleRef) => moduleRef.init());
    const consumer = app.get(OrderConsumer);
    const creator = app.get(ExternalContextCreator);
    // Built-in parameter types (none used here) would come from the transport's own factory.
    const paramsFactory = { exchangeKeyForValue: () => undefined };
    handler = (method) =>
      creator.create(
        consumer,
        consumer[method] as (...args: unknown[]) => unknown,
        method,
        '__routeArguments__',
        paramsFactory,
        undefined,
        undefined,
        {},
        'rpc',
      );
  });
  afterAll(() => app.close());

  it('a handler without parameter decorators still gets its native arguments', async () => {
    await expect(handler('created')({ id: '1' }, 'rpc-context')).resolves.toEqual({
      id: '1',
      context: 'rpc-context',
      count: 2,
      key: 'order:1',
    });
  });

  it('a handler with parameter decorators gets what they give, without the hidden one', async () => {
    await expect(handler('cancelled')('2', 'rpc-context')).resolves.toEqual({ id: '2', count: 1, key: 'order:2' });
  });

  it('lock errors stay lock errors (no HTTP mapping outside HTTP)', async () => {
    const holder = await app.get(LockService).acquire('order:3');
    await expect(handler('created')({ id: '3' }, 'rpc-context')).rejects.toBeInstanceOf(LockTimeoutError);
    await holder.release();
  });
});
