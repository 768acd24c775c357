import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Logger, type INestApplication, type LoggerService } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Payload, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom, Observable, Subject, toArray } from 'rxjs';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { freePort } from '../harness/free-port.js';
import { deferred, nextEvent, unreachableBackend } from './nest-test-kit.js';

/** Keeps what Nest logs as errors. */
class ErrorLog implements LoggerService {
  readonly errors: unknown[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown): void {
    this.errors.push(message);
  }
}

@Controller()
class StockConsumer {
  gate = deferred();
  entered = deferred();
  ticks = new Subject<number>();

  constructor(private readonly locks: LockService) {}

  @MessagePattern('stock.reserve')
  @Locked({ key: 'stock:{data.sku}', waitMs: 0 })
  async reserve(@Payload() order: { sku: string }) {
    this.entered.resolve();
    await this.gate.promise;
    return { sku: order.sku, key: this.locks.current()?.key, count: arguments.length };
  }

  /** `{0}` is the handler's first argument: the payload, after pipes. */
  @MessagePattern('stock.count')
  @Locked({ key: 'count:{0.sku}', waitMs: 0 })
  count(@Payload() _order: { sku: string }) {
    return { key: this.locks.current()?.key };
  }

  /** A streamed answer: the lock is held until the stream completes. */
  @MessagePattern('stock.watch')
  @Locked({ key: 'watch:{data.sku}', waitMs: 0 })
  watch(): Observable<number> {
    return this.ticks;
  }
}

async function startService(
  backend: LockBackend | { type: 'memory' },
  log: ErrorLog,
): Promise<{ app: INestApplication; client: ClientProxy }> {
  const port = await freePort();
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ backend })],
    controllers: [StockConsumer],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: log });
  app.connectMicroservice(
    { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
    { inheritAppConfig: true },
  );
  await app.startAllMicroservices();
  await app.init();
  const client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
  await client.connect();
  return { app, client };
}

describe('@Locked on a TCP microservice handler', () => {
  const log = new ErrorLog();
  let app: INestApplication;
  let client: ClientProxy;
  let consumer: StockConsumer;

  beforeAll(async () => {
    Logger.overrideLogger(log);
    ({ app, client } = await startService({ type: 'memory' }, log));
    consumer = app.get(StockConsumer);
  });
  afterAll(async () => {
    client.close();
    await app.close();
  });

  const send = (pattern: string, data: unknown) => lastValueFrom(client.send(pattern, data));

  it('locks by the message payload ({data.x}) and by the handler argument ({0.x})', async () => {
    consumer.gate.resolve();
    await expect(send('stock.reserve', { sku: 'A' })).resolves.toEqual({ sku: 'A', key: 'stock:A', count: 1 });
    await expect(send('stock.count', { sku: 'B' })).resolves.toEqual({ key: 'count:B' });
  });

  it('a busy lock is an RpcException with code LOCK_BUSY, the key and retryAfterMs, not logged as an error', async () => {
    consumer.gate = deferred();
    consumer.entered = deferred();
    const first = send('stock.reserve', { sku: 'C' });
    await consumer.entered.promise;
    const busy = await send('stock.reserve', { sku: 'C' }).catch((error: unknown) => error);
    expect(busy).toMatchObject({
      status: 'error',
      code: 'LOCK_BUSY',
      key: 'stock:C',
      message: expect.stringContaining('busy'),
    });
    expect(typeof (busy as { retryAfterMs?: unknown }).retryAfterMs).toBe('number');
    consumer.gate.resolve();
    await expect(first).resolves.toMatchObject({ key: 'stock:C' });
    expect(log.errors).toEqual([]);
  });

  it('a streamed answer holds the lock until it completes', async () => {
    const locks = app.get(LockService);
    consumer.ticks = new Subject<number>();
    const acquired = nextEvent(locks, (event) => event.type === 'acquired' && event.key === 'watch:D');
    const streamed = lastValueFrom(client.send('stock.watch', { sku: 'D' }).pipe(toArray()));
    await acquired;
    await expect(send('stock.watch', { sku: 'D' })).rejects.toMatchObject({ code: 'LOCK_BUSY' });
    const released = nextEvent(locks, (event) => event.type === 'released' && event.key === 'watch:D');
    consumer.ticks.next(1);
    consumer.ticks.next(2);
    consumer.ticks.complete();
    await expect(streamed).resolves.toEqual([1, 2]);
    await released;
  });
});

describe('@Locked on a TCP microservice handler when the store is down', () => {
  it("answers code LOCK_STORE_UNAVAILABLE, without the store's own message", async () => {
    const log = new ErrorLog();
    const { app, client } = await startService(unreachableBackend, log);
    try {
      const error = await lastValueFrom(client.send('stock.count', { sku: 'A' })).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 'error', code: 'LOCK_STORE_UNAVAILABLE' });
      expect(JSON.stringify(error)).not.toContain('ECONNREFUSED');
    } finally {
      client.close();
      await app.close();
    }
  });
});
