import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Param, Query, type INestApplication, type PipeTransform } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import { collectEvents } from './nest-test-kit.js';

/** A global pipe of the usual kind: it changes strings and passes anything else on. */
class TrimPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return typeof value === 'string' ? value.trim() : value;
  }
}

/** A decorator applied after @Locked() that wraps the method and passes the arguments on, keeping its metadata as well-behaved decorators do. */
function LogArguments(log: string[]): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const inner = descriptor.value as (...args: unknown[]) => unknown;
    descriptor.value = function (this: unknown, ...args: unknown[]) {
      log.push(JSON.stringify(args));
      return inner.apply(this, args);
    };
    for (const key of Reflect.getOwnMetadataKeys(inner))
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, inner), descriptor.value);
    return descriptor;
  };
}

@Injectable()
class AuditService {
  constructor(private readonly locks: LockService) {}

  @Locked('audit:{0}')
  async byArgument(_id: string): Promise<string | undefined> {
    return this.locks.current()?.key;
  }
}

const logged: string[] = [];

@Controller('items')
class ItemsController {
  constructor(
    private readonly locks: LockService,
    private readonly audit: AuditService,
  ) {}

  @Get()
  @Locked('items')
  list() {
    return { count: arguments.length };
  }

  @Get(':id')
  @Locked('item:{params.id}')
  show(@Param('id') id: string, @Query('q') q: string) {
    return { id, q, count: arguments.length, key: this.locks.current()?.key };
  }

  @Get(':id/by-argument')
  @Locked('item:{0}')
  byArgument(@Param('id') _id: string) {
    return { key: this.locks.current()?.key, count: arguments.length };
  }

  @Get(':id/twice')
  @Locked('outer:{params.id}')
  @Locked('inner:{query.q}')
  twice(@Param('id') id: string, @Query('q') _q: string) {
    return { id, count: arguments.length, key: this.locks.current()?.key };
  }

  @Get(':id/logged')
  @LogArguments(logged)
  @Locked('logged:{params.id}')
  logged(@Param('id') id: string) {
    return { id, count: arguments.length, key: this.locks.current()?.key };
  }

  @Get(':id/audit-argument')
  @Locked('item:{params.id}')
  async auditArgument(@Param('id') id: string) {
    return { key: await this.audit.byArgument(id) };
  }
}

describe('@Locked on route handlers: arguments, pipes, stacked decorators', () => {
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      controllers: [ItemsController],
      providers: [AuditService],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalPipes(new TrimPipe());
    await app.init();
    locks = app.get(LockService);
  });
  afterAll(() => app.close());

  const get = (path: string) => request(app.getHttpServer()).get(path);

  it('the handler gets exactly the arguments Nest would pass it without @Locked', async () => {
    await get('/items/1?q=%20x%20').expect(200, { id: '1', q: 'x', count: 2, key: 'item:1' });
    await get('/items').expect(200, { count: 0 });
  });

  it("{0} names the handler's own first argument", async () => {
    await get('/items/2/by-argument').expect(200, { key: 'item:2', count: 1 });
  });

  it('two @Locked on one handler both read the request, one acquisition each', async () => {
    const events = collectEvents(locks);
    await get('/items/3/twice?q=x').expect(200, { id: '3', count: 2, key: 'inner:x' });
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual([
      'outer:3',
      'inner:x',
    ]);
  });

  it("a decorator wrapping @Locked and passing the arguments on keeps the request visible, and sees exactly the handler's arguments", async () => {
    await get('/items/4/logged').expect(200, { id: '4', count: 1, key: 'logged:4' });
    expect(logged).toEqual(['["4"]']);
  });

  it("a locked method the handler calls with arguments locks by them, inside the handler's lock", async () => {
    const events = collectEvents(locks);
    await get('/items/6/audit-argument').expect(200, { key: 'audit:6' });
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual([
      'item:6',
      'audit:6',
    ]);
  });
});
