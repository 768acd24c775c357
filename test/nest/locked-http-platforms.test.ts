import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Injectable,
  Param,
  Post,
  RequestTimeoutException,
  Sse,
  StreamableFile,
  UseGuards,
  UsePipes,
  type ArgumentMetadata,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type MessageEvent,
  type NestInterceptor,
  type PipeTransform,
} from '@nestjs/common';
import { UseInterceptors } from '@nestjs/common';
import { AsyncResource } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { Observable, Subject, TimeoutError, catchError, finalize, throwError, timeout } from 'rxjs';
import request from 'supertest';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import { openRequest, PLATFORMS, startHttpApp } from './http-platform.js';
import { collectEvents, deferred, nextEvent } from './nest-test-kit.js';

/** A schema pipe written as the Nest docs write one (ZodValidationPipe): validates and returns the parsed value. */
class SchemaPipe implements PipeTransform {
  readonly seen: ArgumentMetadata['type'][] = [];
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    this.seen.push(metadata.type);
    const order = value as { sku?: unknown; quantity?: unknown };
    if (typeof order?.sku !== 'string' || typeof order.quantity !== 'number')
      throw new BadRequestException('sku (string) and quantity (number) are required');
    return { sku: order.sku.toUpperCase(), quantity: order.quantity };
  }
}
const orderSchema = new SchemaPipe();

/** A global pipe that copies every value it is given, as some validation or sanitising pipes do. */
class CloningPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return structuredClone(value);
  }
}

/** The timeout interceptor of the Nest docs, on a controller (so it runs around @Locked's). */
@Injectable()
class TimeoutInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      timeout(100),
      catchError((error: unknown) =>
        throwError(() => (error instanceof TimeoutError ? new RequestTimeoutException() : error)),
      ),
    );
  }
}

/** Records what guards see of the handler. */
@Injectable()
class HandlerLengthGuard implements CanActivate {
  static readonly lengths: number[] = [];
  canActivate(context: ExecutionContext): boolean {
    HandlerLengthGuard.lengths.push(context.getHandler().length);
    return true;
  }
}

/** How many runs of a handler's work are inside at once, and the most ever seen. */
class Occupancy {
  inside = 0;
  most = 0;
  enter(): void {
    this.most = Math.max(this.most, ++this.inside);
  }
  leave(): void {
    this.inside--;
  }
}

@Controller('shop')
class ShopController {
  readonly occupancy = new Occupancy();
  /** The work of the handlers that stream, driven by the test. */
  feed = new Subject<string>();
  feedSubscribed = deferred();
  file: Readable | undefined;
  fileCreated = deferred();
  events = new Subject<MessageEvent>();
  /** Reads current() in the async context of the latest items/:id call, whenever the test calls it. */
  probe: () => unknown = () => 'not called';

  constructor(private readonly locks: LockService) {}

  @Post('orders')
  @UsePipes(orderSchema)
  @Locked({ key: 'order:{0.sku}', waitMs: 0 })
  create(@Body() order: { sku: string; quantity: number }) {
    return { order, count: arguments.length, key: this.locks.current()?.key };
  }

  @Get('items/:id')
  @UseGuards(HandlerLengthGuard)
  @Locked({ key: 'item:{0}', waitMs: 0 })
  item(@Param('id') id: string) {
    this.probe = AsyncResource.bind(() => this.locks.current());
    return { id, count: arguments.length, key: this.locks.current()?.key };
  }

  @Get('twin/:id')
  @UseGuards(HandlerLengthGuard)
  twin(@Param('id') id: string) {
    return { id, count: arguments.length };
  }

  /** The work runs when the response is subscribed to, after the method returned. */
  @Get('feed/:id')
  @Locked({ key: 'feed:{params.id}', waitMs: 0 })
  stream(@Param('id') _id: string): Observable<string> {
    return new Observable<string>((subscriber) => {
      this.occupancy.enter();
      this.feedSubscribed.resolve();
      const key = this.locks.current()?.key;
      const inner = this.feed.subscribe({
        next: (value) => subscriber.next(`${value}@${key}`),
        complete: () => subscriber.complete(),
      });
      return () => {
        inner.unsubscribe();
        this.occupancy.leave();
      };
    });
  }

  @Get('files/:id')
  @Locked({ key: 'file:{params.id}', waitMs: 0 })
  async download(@Param('id') _id: string): Promise<StreamableFile> {
    this.file = new Readable({ read() {} });
    this.fileCreated.resolve();
    return new StreamableFile(this.file);
  }

  @Sse('events/:id')
  @Locked({ key: 'sse:{params.id}', waitMs: 0 })
  sse(@Param('id') _id: string): Observable<MessageEvent> {
    this.occupancy.enter();
    return this.events.pipe(finalize(() => this.occupancy.leave()));
  }
}

@Controller('slow')
@UseInterceptors(TimeoutInterceptor)
class SlowController {
  gate = deferred();
  runs = 0;
  finished = 0;

  @Get(':id')
  @Locked({ key: 'slow:{params.id}', waitMs: 0 })
  async slow(@Param('id') id: string) {
    this.runs++;
    await this.gate.promise;
    this.finished++;
    return { id };
  }
}

/** A base controller whose handler subclasses override and call through `super`. */
@Injectable()
class CatalogBase {
  constructor(protected readonly locks: LockService) {}

  @Get(':id')
  @Locked('catalog:{params.id}')
  async show(@Param('id') id: string): Promise<Record<string, unknown>> {
    return { id, keys: this.held(), count: arguments.length };
  }

  protected held(): string | undefined {
    return this.locks.current()?.key;
  }
}

@Controller('same-lock')
class SameLockCatalog extends CatalogBase {
  @Get(':id')
  @Locked('catalog:{params.id}')
  override async show(@Param('id') id: string) {
    const own = this.held();
    return { ...(await super.show(id)), own, overrideCount: arguments.length };
  }
}

@Controller('own-lock')
class OwnLockCatalog extends CatalogBase {
  @Get(':id')
  @Locked('shelf:{params.id}')
  override async show(@Param('id') id: string) {
    const own = this.held();
    return { ...(await super.show(id)), own, overrideCount: arguments.length };
  }
}

describe.each(PLATFORMS)('@Locked handlers on %s', (platform) => {
  let app: INestApplication;
  let shop: ShopController;
  let locks: LockService;
  const get = (path: string) => request(app.getHttpServer()).get(path);
  const released = (key: string) => nextEvent(locks, (event) => event.type === 'released' && event.key === key);

  beforeAll(async () => {
    app = await startHttpApp(
      platform,
      {
        imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
        controllers: [ShopController, SlowController, SameLockCatalog, OwnLockCatalog],
        providers: [HandlerLengthGuard, TimeoutInterceptor],
      },
      (created) => created.useGlobalPipes(new CloningPipe()),
    );
    shop = app.get(ShopController);
    locks = app.get(LockService);
  });
  afterAll(() => app.close());

  describe('pipes and arguments', () => {
    it('a method-level schema pipe validates only the body: valid orders pass, invalid ones are 400', async () => {
      orderSchema.seen.length = 0;
      await request(app.getHttpServer())
        .post('/shop/orders')
        .send({ sku: 'ab1', quantity: 2 })
        .expect(201, { order: { sku: 'AB1', quantity: 2 }, count: 1, key: 'order:AB1' });
      await request(app.getHttpServer()).post('/shop/orders').send({ sku: 'ab1' }).expect(400);
      expect(orderSchema.seen).toEqual(['body', 'body']);
    });

    it('{0} is the argument after pipes, and a global cloning pipe changes nothing: 200, and 409 (not 500) when busy', async () => {
      await get('/shop/items/7').expect(200, { id: '7', count: 1, key: 'item:7' });
      const holder = await locks.acquire('item:8');
      await get('/shop/items/8').expect(409);
      await holder.release();
    });

    it('guards see the same handler length as on an undecorated twin', async () => {
      HandlerLengthGuard.lengths.length = 0;
      await get('/shop/items/9').expect(200);
      await get('/shop/twin/9').expect(200, { id: '9', count: 1 });
      expect(HandlerLengthGuard.lengths).toEqual([1, 1]);
    });
  });

  describe('the lock covers the whole response', () => {
    it('an Observable: held while it runs, after the method returned (second request 409), released when it completes', async () => {
      shop.feed = new Subject<string>();
      shop.feedSubscribed = deferred();
      const first = get('/shop/feed/1').then((response) => response);
      await shop.feedSubscribed.promise;
      expect(shop.occupancy.inside).toBe(1);
      await get('/shop/feed/1').expect(409);
      const freed = released('feed:1');
      shop.feed.next('a');
      shop.feed.complete();
      expect((await first).text).toBe('a@feed:1');
      await freed;
      expect(shop.occupancy.most).toBe(1);
      shop.feed = new Subject<string>();
      shop.feedSubscribed = deferred();
      const again = get('/shop/feed/1').then((response) => response.status);
      await shop.feedSubscribed.promise;
      shop.feed.next('b');
      shop.feed.complete();
      await expect(again).resolves.toBe(200);
    });

    it('a StreamableFile: held until its stream was sent, and released when the client goes away mid-stream', async () => {
      shop.fileCreated = deferred();
      const opening = openRequest(app, '/shop/files/1');
      await shop.fileCreated.promise;
      shop.file!.push('part one;');
      const first = await opening;
      await first.waitFor('part one;');
      await get('/shop/files/1').expect(409);
      const freed = released('file:1');
      shop.file!.push('part two');
      shop.file!.push(null);
      await expect(first.ended).resolves.toBe('part one;part two');
      await freed;

      shop.fileCreated = deferred();
      const openingSecond = openRequest(app, '/shop/files/1');
      await shop.fileCreated.promise;
      shop.file!.push('x');
      const second = await openingSecond;
      await second.waitFor('x');
      const freedOnAbort = released('file:1');
      second.abort();
      await freedOnAbort;
      shop.fileCreated = deferred();
      const third = get('/shop/files/1').then((response) => response.status);
      await shop.fileCreated.promise;
      shop.file!.push(null);
      await expect(third).resolves.toBe(200);
    });

    it('an SSE stream: held while it streams (second client 409), released when it completes or the client goes away', async () => {
      shop.events = new Subject<MessageEvent>();
      const first = await openRequest(app, '/shop/events/1');
      expect(first.status).toBe(200);
      shop.events.next({ data: 'one' });
      await first.waitFor('data: one');
      const second = await openRequest(app, '/shop/events/1');
      expect(second.status).toBe(409);
      second.abort();
      const freed = released('sse:1');
      shop.events.complete();
      await first.ended;
      await freed;

      shop.events = new Subject<MessageEvent>();
      const third = await openRequest(app, '/shop/events/1');
      shop.events.next({ data: 'three' });
      await third.waitFor('data: three');
      const freedOnLeave = released('sse:1');
      third.abort();
      await freedOnLeave;
      expect(shop.occupancy.inside).toBe(0);
      expect(shop.occupancy.most).toBe(1);
    });

    it('a timeout interceptor around it answers the first caller, but no second handler gets in while the first still runs', async () => {
      const slow = app.get(SlowController);
      await get('/slow/1').expect(408);
      expect(slow.runs).toBe(1);
      await get('/slow/1').expect(409);
      expect(slow.runs).toBe(1);
      const freed = released('slow:1');
      slow.gate.resolve();
      await freed;
      expect(slow.finished).toBe(1);
      await get('/slow/1').expect(200, { id: '1' });
    });

    it("current() is the lock in the handler; code of the request's async context that runs after the response finds none", async () => {
      const events = collectEvents(locks);
      await get('/shop/items/42').expect(200, { id: '42', count: 1, key: 'item:42' });
      expect(events.map((event) => event.type)).toEqual(['acquired', 'released']);
      expect(shop.probe()).toBeUndefined();
    });
  });

  describe('inheritance', () => {
    it('an override with the same @Locked calling super: one lock, taken once, seen by both', async () => {
      const events = collectEvents(locks);
      await get('/same-lock/1').expect(200, {
        id: '1',
        keys: 'catalog:1',
        own: 'catalog:1',
        count: 1,
        overrideCount: 1,
      });
      expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['catalog:1']);
    });

    it("an override with its own key calling super: both locks, the override's first", async () => {
      const events = collectEvents(locks);
      await get('/own-lock/1').expect(200, { id: '1', keys: 'catalog:1', own: 'shelf:1', count: 1, overrideCount: 1 });
      expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual([
        'shelf:1',
        'catalog:1',
      ]);
      expect(events.filter((event) => event.type === 'released').map((event) => event.key)).toEqual([
        'catalog:1',
        'shelf:1',
      ]);
    });
  });
});
