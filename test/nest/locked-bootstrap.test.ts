import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Injectable,
  Param,
  Post,
  Query,
  SetMetadata,
  UsePipes,
  type INestApplication,
  type ModuleMetadata,
  type PipeTransform,
} from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { ConnectedSocket, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import request from 'supertest';
import { DistributedLockModule, InvalidLockArgumentError, Locked, LockService } from '../../lib/index.js';
import { collectEvents } from './nest-test-kit.js';

async function init(metadata: ModuleMetadata): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, waitMs: 0 })],
    ...metadata,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  app.useWebSocketAdapter(new WsAdapter(app));
  try {
    return await app.init();
  } catch (error) {
    await app.close();
    throw error;
  }
}

describe('a key template naming a request part that no parameter carries fails the bootstrap, saying what to add', () => {
  @Controller('a')
  class NoParam {
    @Get(':id')
    @Locked('item:{params.id}')
    show() {}
  }

  @Controller('b')
  class OtherPart {
    @Locked('item:{body.sku}')
    @Post()
    create(@Query('sku') _sku: string) {}
  }

  @Injectable()
  class Service {
    @Locked('audit:{params.id}')
    async record() {}
  }

  @Injectable()
  @WebSocketGateway({ path: '/x' })
  class Gateway {
    @SubscribeMessage('reserve')
    @Locked('stock:{data.sku}')
    reserve(@ConnectedSocket() _socket: unknown) {}
  }

  it.each([
    [
      'a route without the parameter (@Locked below @Get)',
      { controllers: [NoParam] },
      '@Locked() on NoParam.show: key template "item:{params.id}" names {params.id}, which no parameter of NoParam.show carries: add @Param(\'id\') id (or @Param() params, or @Req() request)',
    ],
    [
      'a route whose parameter carries another part (@Locked above @Post)',
      { controllers: [OtherPart] },
      "names {body.sku}, which no parameter of OtherPart.create carries: add @Body('sku') sku",
    ],
    [
      'a provider method, which has no request',
      { providers: [Service] },
      "Service.record is not a handler Nest calls (a route, a message or GraphQL handler); name the key by the method's arguments",
    ],
    [
      'a gateway handler without the message',
      { providers: [Gateway] },
      'names {data.sku}, which no parameter of Gateway.reserve carries: add @Payload() data (microservices) or @MessageBody() data (gateways)',
    ],
  ])('%s', async (_what, metadata, message) => {
    const failure = await init(metadata).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidLockArgumentError);
    expect((failure as Error).message).toContain(message);
  });
});

/** Refuses a body without a string `sku`, as a validation pipe would. */
class OrderPipe implements PipeTransform {
  transform(value: { sku?: unknown }) {
    if (typeof value?.sku !== 'string') throw new BadRequestException('sku is required');
    return value;
  }
}

const Audited = () => SetMetadata('audited', true);

@Controller('orders')
class Orders {
  @Post()
  @UsePipes(OrderPipe)
  @Locked('order:{body.sku}')
  create(@Body() order: { sku: string }) {
    return order;
  }

  @Audited()
  @Locked('order:{params.id}')
  @Get(':id')
  show(@Param('id') id: string) {
    return { id };
  }
}

describe('@Locked runs inside the method, after guards and pipes', () => {
  let app: INestApplication;
  beforeAll(async () => {
    app = await init({ controllers: [Orders] });
  });
  afterAll(() => app.close());

  it('a body a pipe refuses is answered 400 while the key is held, and never acquires', async () => {
    const held = await app.get(LockService).acquire('order:A1');
    const events = collectEvents(app.get(LockService));
    try {
      await request(app.getHttpServer()).post('/orders').send({ sku: 42 }).expect(400);
      await request(app.getHttpServer()).post('/orders').send({ sku: 'A1' }).expect(409);
    } finally {
      await held.release();
    }
    expect(events.filter((event) => event.type === 'acquired')).toEqual([]);
    await request(app.getHttpServer()).post('/orders').send({ sku: 'A1' }).expect(201, { sku: 'A1' });
  });

  it('the method keeps its name and the metadata of decorators on either side', () => {
    expect(Orders.prototype.show.name).toBe('show');
    expect(Orders.prototype.create.name).toBe('create');
    expect(Reflect.getMetadata('audited', Orders.prototype.show)).toBe(true);
    expect(Reflect.getMetadata('path', Orders.prototype.show)).toBe(':id');
    expect(Reflect.getMetadata('__pipes__', Orders.prototype.create)).toEqual([OrderPipe]);
  });
});
