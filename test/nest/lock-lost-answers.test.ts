import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Logger,
  Param,
  Post,
  UseFilters,
  type INestApplication,
  type LoggerService,
} from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, GraphQLModule, Mutation, Query, Resolver } from '@nestjs/graphql';
import { ClientProxyFactory, MessagePattern, Payload, Transport, type ClientProxy } from '@nestjs/microservices';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Redis } from 'ioredis';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { WebSocket } from 'ws';
import { DistributedLockModule, Locked, LockErrorsFilter, LockService, RedisFenceGuard } from '../../lib/index.js';
import { freePort } from '../harness/free-port.js';
import { RedisServer } from '../harness/redis-server.js';

const LEASE_MS = 400;
const GUARD = 'LEDGER_FENCE_GUARD';

/** Keeps what Nest logs: a lost lock's answer is a warning, never an error. */
class Log implements LoggerService {
  readonly errors: unknown[] = [];
  readonly warnings: string[] = [];
  log(): void {}
  debug(): void {}
  verbose(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
  error(message: unknown): void {
    this.errors.push(message);
  }
}

/** The holder's work: it stalls past its lease (a blocked event loop, as a long GC pause or SIGSTOP does), then writes through the fence guard. */
@Injectable()
class Ledger {
  constructor(
    private readonly locks: LockService,
    @Inject(GUARD) private readonly guard: RedisFenceGuard,
  ) {}

  async writeAfterPause(entry: string): Promise<string> {
    const lock = this.locks.current()!;
    const until = performance.now() + LEASE_MS * 2;
    while (performance.now() < until) {
      // blocked: no timer, no renewal, no I/O
    }
    // Resumed: the engine notices that the lease lapsed while the loop was blocked.
    if (!lock.signal.aborted) await once(lock.signal, 'abort');
    await this.guard.set(`ledger:${entry}`, 'written', lock);
    return 'written';
  }
}

@Controller('ledger')
class LedgerController {
  constructor(
    private readonly ledger: Ledger,
    private readonly locks: LockService,
  ) {}

  @Post(':entry')
  @Locked({ key: 'entry:{params.entry}', leaseMs: LEASE_MS, waitMs: 0 })
  write(@Param('entry') entry: string) {
    return this.ledger.writeAfterPause(entry);
  }

  /** No `@Locked()`: the lock is taken by hand, and the global filter answers. */
  @Get(':entry/by-hand')
  byHand(@Param('entry') entry: string) {
    return this.locks.withLock(`entry:${entry}`, () => this.ledger.writeAfterPause(entry), {
      leaseMs: LEASE_MS,
      waitMs: 0,
    });
  }

  @MessagePattern('ledger.write')
  @Locked({ key: 'entry:{data.entry}', leaseMs: LEASE_MS, waitMs: 0 })
  writeMessage(@Payload() message: { entry: string }) {
    return this.ledger.writeAfterPause(message.entry);
  }
}

@Resolver()
class LedgerResolver {
  constructor(private readonly ledger: Ledger) {}

  @Query(() => String)
  ping(): string {
    return 'pong';
  }

  @Mutation(() => String)
  @Locked({ key: 'entry:{args.entry}', leaseMs: LEASE_MS, waitMs: 0 })
  write(@Args('entry') entry: string): Promise<string> {
    return this.ledger.writeAfterPause(entry);
  }
}

@Injectable()
@WebSocketGateway({ path: '/ledger' })
@UseFilters(LockErrorsFilter)
class LedgerGateway {
  constructor(private readonly ledger: Ledger) {}

  @SubscribeMessage('write')
  @Locked({ key: 'entry:{data.entry}', leaseMs: LEASE_MS, waitMs: 0 })
  async write(@MessageBody() message: { entry: string }) {
    return { event: 'written', data: await this.ledger.writeAfterPause(message.entry) };
  }
}

describe('a holder paused past its lease whose fenced write is refused answers LOCK_LOST, in every context', () => {
  const log = new Log();
  let redis: RedisServer;
  let client: Redis;
  let app: INestApplication;
  let rpc: ClientProxy;
  let socket: WebSocket;

  beforeAll(async () => {
    redis = await RedisServer.start();
    client = new Redis(redis.url);
    Logger.overrideLogger(log);
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'redis', url: redis.url } }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      controllers: [LedgerController],
      providers: [Ledger, LedgerResolver, LedgerGateway, { provide: GUARD, useValue: new RedisFenceGuard(client) }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: log });
    app.useWebSocketAdapter(new WsAdapter(app));
    app.connectMicroservice(
      { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    rpc = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await rpc.connect();
    socket = new WebSocket(`ws://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/ledger`);
    await once(socket, 'open');
  });
  afterAll(async () => {
    socket?.close();
    rpc?.close();
    await app?.close();
    client?.disconnect();
    await redis?.stop();
  });

  /** Nothing was written, and a warning named the key and the cause; nothing was logged as an error. */
  async function expectRefusedAndWarned(entry: string): Promise<void> {
    await expect(client.get(`ledger:${entry}`)).resolves.toBeNull();
    expect(log.warnings).toContainEqual(
      expect.stringMatching(
        new RegExp(`Lock "entry:${entry}" was lost: .*signal has aborted.*answered as a conflict, code LOCK_LOST`),
      ),
    );
    expect(log.errors).toEqual([]);
  }

  it.each([
    ['a @Locked() route', 'http-locked', (entry: string) => request(app.getHttpServer()).post(`/ledger/${entry}`)],
    [
      'a route that locks with withLock()',
      'http-by-hand',
      (entry: string) => request(app.getHttpServer()).get(`/ledger/${entry}/by-hand`),
    ],
  ])('HTTP, %s: 409 with code LOCK_LOST and the key, the reason kept out', async (_what, entry, send) => {
    const response = await send(entry).expect(409);
    expect(response.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Lock "entry:${entry}" was lost while the request held it; the work it guarded was refused`,
      code: 'LOCK_LOST',
      key: `entry:${entry}`,
    });
    await expectRefusedAndWarned(entry);
  });

  it('a microservice: an RpcException whose error has code LOCK_LOST', async () => {
    const answer = await lastValueFrom(rpc.send('ledger.write', { entry: 'rpc' })).catch((error: unknown) => error);
    expect(answer).toMatchObject({ status: 'error', code: 'LOCK_LOST', key: 'entry:rpc' });
    await expectRefusedAndWarned('rpc');
  });

  it('GraphQL: an error whose extensions.code is LOCK_LOST', async () => {
    const response = await request(app.getHttpServer())
      .post('/graphql')
      .send({ query: 'mutation { write(entry: "gql") }' });
    expect(response.body.errors?.[0]?.extensions).toMatchObject({ code: 'LOCK_LOST', key: 'entry:gql' });
    await expectRefusedAndWarned('gql');
  });

  it('a WebSocket gateway: an exception event with code LOCK_LOST', async () => {
    const answered = once(socket, 'message');
    socket.send(JSON.stringify({ event: 'write', data: { entry: 'ws' } }));
    const [raw] = await answered;
    expect(JSON.parse(String(raw))).toEqual({
      event: 'exception',
      data: expect.objectContaining({ status: 'error', code: 'LOCK_LOST', key: 'entry:ws' }),
    });
    await expectRefusedAndWarned('ws');
  });
});
