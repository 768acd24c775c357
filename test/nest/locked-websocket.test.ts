import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import { deferred } from './nest-test-kit.js';

@Injectable()
@WebSocketGateway({ path: '/stock' })
class StockGateway {
  gate = deferred();
  entered = deferred();

  constructor(private readonly locks: LockService) {}

  @SubscribeMessage('reserve')
  @Locked({ key: 'ws:{data.sku}', waitMs: 0 })
  async reserve(@MessageBody() order: { sku: string }) {
    this.entered.resolve();
    await this.gate.promise;
    return { event: 'reserved', data: { sku: order.sku, key: this.locks.current()?.key } };
  }
}

/** A WebSocket client that collects the messages it receives. */
async function connect(
  url: string,
): Promise<{ send(event: string, data: unknown): void; next(): Promise<unknown>; close(): void }> {
  const socket = new WebSocket(url);
  const received: unknown[] = [];
  const waiting: ((message: unknown) => void)[] = [];
  socket.on('message', (raw) => {
    const message: unknown = JSON.parse((raw as Buffer).toString());
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else received.push(message);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    send: (event, data) => socket.send(JSON.stringify({ event, data })),
    next: () =>
      received.length > 0 ? Promise.resolve(received.shift()) : new Promise((resolve) => waiting.push(resolve)),
    close: () => socket.close(),
  };
}

describe('@Locked on a WebSocket gateway handler', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [StockGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    url = `ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/stock`;
  });
  afterAll(() => app.close());

  it('locks by the message ({data.x}); a busy lock is a WsException with code LOCK_BUSY', async () => {
    const gateway = app.get(StockGateway);
    const [first, second] = await Promise.all([connect(url), connect(url)]);
    first.send('reserve', { sku: 'A' });
    await gateway.entered.promise;
    second.send('reserve', { sku: 'A' });
    await expect(second.next()).resolves.toEqual({
      event: 'exception',
      data: expect.objectContaining({ status: 'error', code: 'LOCK_BUSY', key: 'ws:A' }),
    });
    gateway.gate.resolve();
    await expect(first.next()).resolves.toEqual({ event: 'reserved', data: { sku: 'A', key: 'ws:A' } });
    second.send('reserve', { sku: 'A' });
    await expect(second.next()).resolves.toEqual({ event: 'reserved', data: { sku: 'A', key: 'ws:A' } });
    first.close();
    second.close();
  });
});
