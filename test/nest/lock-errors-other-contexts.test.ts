import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, UseFilters, type INestApplication, type LoggerService } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, GraphQLModule, Mutation, Query, Resolver } from '@nestjs/graphql';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { WebSocket } from 'ws';
import { DistributedLockModule, Locked, LockErrorsFilter, LockService, StaleFenceError } from '../../lib/index.js';

class ErrorLog implements LoggerService {
  readonly errors: unknown[] = [];
  log(): void {}
  warn(): void {}
  error(message: unknown): void {
    this.errors.push(message);
  }
}

@Injectable()
class StockService {
  @Locked({ key: 'stock:{0}', waitMs: 0 })
  async reserve(sku: string): Promise<string> {
    return sku;
  }

  write(): never {
    throw new StaleFenceError('stock', 4, 9);
  }
}

/** Handlers without `@Locked()`: the lock and the fenced write are in the service. Nest applies no global filter to gateways, so the gateway names the library's. */
@Injectable()
@WebSocketGateway({ path: '/stock' })
@UseFilters(LockErrorsFilter)
class StockGateway {
  constructor(private readonly stock: StockService) {}

  @SubscribeMessage('reserve')
  async reserve(@MessageBody() sku: string) {
    return { event: 'reserved', data: await this.stock.reserve(sku) };
  }

  @SubscribeMessage('write')
  write() {
    return this.stock.write();
  }
}

@Resolver()
class StockResolver {
  constructor(private readonly stock: StockService) {}

  @Query(() => String)
  ping(): string {
    return 'pong';
  }

  @Mutation(() => String)
  reserve(@Args('sku') sku: string): Promise<string> {
    return this.stock.reserve(sku);
  }

  @Mutation(() => String)
  write(): string {
    return this.stock.write();
  }
}

describe('lock errors thrown in a service method called by a WebSocket gateway', () => {
  let app: INestApplication;
  let socket: WebSocket;
  const received: unknown[] = [];
  const waiting: ((message: unknown) => void)[] = [];
  const next = (): Promise<unknown> =>
    received.length > 0 ? Promise.resolve(received.shift()) : new Promise((resolve) => waiting.push(resolve));
  const send = (event: string, data: unknown) => socket.send(JSON.stringify({ event, data }));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [StockService, StockGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    socket = new WebSocket(`ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/stock`);
    socket.on('message', (raw) => {
      const message: unknown = JSON.parse((raw as Buffer).toString());
      const waiter = waiting.shift();
      if (waiter) waiter(message);
      else received.push(message);
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  });
  afterAll(async () => {
    socket?.close();
    await app?.close();
  });

  it('a busy lock is a WsException with code LOCK_BUSY; a stale fence one with LOCK_STALE_FENCE', async () => {
    const lock = await app.get(LockService).acquire('stock:A', { waitMs: 0 });
    try {
      send('reserve', 'A');
      await expect(next()).resolves.toEqual({
        event: 'exception',
        data: expect.objectContaining({ status: 'error', code: 'LOCK_BUSY', key: 'stock:A' }),
      });
    } finally {
      await lock.release();
    }
    send('reserve', 'A');
    await expect(next()).resolves.toEqual({ event: 'reserved', data: 'A' });
    send('write', {});
    await expect(next()).resolves.toEqual({
      event: 'exception',
      data: expect.objectContaining({ code: 'LOCK_STALE_FENCE', resource: 'stock', fence: 4, highest: 9 }),
    });
  });
});

describe('lock errors thrown in a service method called by a GraphQL resolver', () => {
  const log = new ErrorLog();
  let app: INestApplication;

  beforeAll(async () => {
    Logger.overrideLogger(log);
    const moduleRef = await Test.createTestingModule({
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' } }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [StockService, StockResolver],
    }).compile();
    app = moduleRef.createNestApplication({ logger: log });
    await app.init();
  });
  afterAll(() => app.close());

  const mutate = (query: string, variables: Record<string, unknown> = {}) =>
    request(app.getHttpServer())
      .post('/graphql')
      .send({ query, variables })
      .then((response) => response.body as { data?: unknown; errors?: { extensions: Record<string, unknown> }[] });

  it('a busy lock is an error whose extensions.code is LOCK_BUSY; a stale fence LOCK_STALE_FENCE; neither logged', async () => {
    const lock = await app.get(LockService).acquire('stock:G', { waitMs: 0 });
    try {
      const busy = await mutate('mutation($sku: String!) { reserve(sku: $sku) }', { sku: 'G' });
      expect(busy.errors?.[0]?.extensions).toMatchObject({ code: 'LOCK_BUSY', key: 'stock:G' });
    } finally {
      await lock.release();
    }
    await expect(mutate('mutation($sku: String!) { reserve(sku: $sku) }', { sku: 'G' })).resolves.toEqual({
      data: { reserve: 'G' },
    });
    const stale = await mutate('mutation { write }');
    expect(stale.errors?.[0]?.extensions).toMatchObject({
      code: 'LOCK_STALE_FENCE',
      resource: 'stock',
      fence: 4,
      highest: 9,
    });
    expect(log.errors).toEqual([]);
  });
});
