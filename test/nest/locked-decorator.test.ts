import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  Injectable,
  Param,
  Scope,
  type INestApplication,
  type INestApplicationContext,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLockError,
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockService,
  type LockedOptions,
} from '../../lib/index.js';
import { LOCKED_METADATA } from '../../lib/nest/lock-constants.js';
import { collectEvents } from './nest-test-kit.js';

describe('@Locked() validates its arguments when the class is defined', () => {
  const locked = Locked as (...args: unknown[]) => MethodDecorator;
  const define =
    (...args: unknown[]) =>
    () => {
      class Job {
        @locked(...args)
        async run() {}
      }
      return Job;
    };

  it.each<[string, unknown[]]>([
    ['an empty key', ['']],
    ['a number as key', [42]],
    ['an undefined key', [{ key: undefined }]],
    ['a zero lease', ['k', 0]],
    ['a negative wait', ['k', 1000, -1]],
    ['a bad lease in options', [{ key: 'k', leaseMs: Number.NaN }]],
    ['a bad onBusy', [{ key: 'k', onBusy: 'queue' }]],
    ['a bad mode', [{ key: 'k', mode: 'shared' }]],
    ['an unknown option', [{ key: 'k', wait: 5 }]],
    ['options followed by more arguments', [{ key: 'k' }, 1000]],
    ['a bad template', ['k:{user.id}']],
  ])('%s', (_name, args) => {
    expect(define(...args)).toThrow(InvalidLockArgumentError);
  });

  it('names the class and method in the message', () => {
    expect(define({ key: 'k', onBusy: 'queue' })).toThrow(/Job\.run/);
  });

  it('accepts good arguments in both forms', () => {
    expect(define('k', 1000, 0)).not.toThrow();
    expect(define({ key: 'k:{0}', leaseMs: 1000, waitMs: 0, onBusy: 'skip', mode: 'read' })).not.toThrow();
    expect(define({ key: () => 'k' })).not.toThrow();
  });

  it('gives a static method no hidden route parameter (nothing is recorded on Function)', async () => {
    class Job {
      @Locked('static-job')
      static async run(): Promise<string> {
        return 'ran';
      }
    }
    expect(Reflect.getMetadata('__routeArguments__', Function, 'run')).toBeUndefined();
    expect(Reflect.getMetadata('__routeArguments__', Job, 'run')).toBeUndefined();
  });

  it('records its options as metadata on the method', () => {
    class Job {
      @Locked({ key: 'a', onBusy: 'skip' })
      @Locked('b', 2000)
      async run() {}
    }
    const recorded = Reflect.getMetadata(LOCKED_METADATA, Job.prototype.run) as LockedOptions[];
    expect(recorded.map(({ key, leaseMs, waitMs, onBusy }) => ({ key, leaseMs, waitMs, onBusy }))).toEqual([
      { key: 'b', leaseMs: 2000, waitMs: undefined, onBusy: 'throw' },
      { key: 'a', leaseMs: undefined, waitMs: 0, onBusy: 'skip' },
    ]);
  });
});

@Injectable()
class Worker {
  @Locked({ key: 'work:{0}', waitMs: 0 })
  async work(_id: string): Promise<string> {
    return 'worked';
  }

  @Locked({ key: 'outer' })
  @Locked({ key: 'inner' })
  async twice(locks: LockService): Promise<string | undefined> {
    return locks.current()?.key;
  }
}

@Controller('scoped')
class ScopedController {
  constructor(private readonly locks: LockService) {}

  @Get(':id')
  @Locked('scoped:{params.id}')
  show(@Param('id') _id: string) {
    return { key: this.locks.current()?.key };
  }
}

describe('which module a @Locked() method uses', () => {
  const opened: INestApplicationContext[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
  });

  async function start(init = true, extra: { controllers?: never[]; providers?: never[]; http?: boolean } = {}) {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [Worker, ...(extra.providers ?? [])],
      controllers: extra.controllers ?? [],
    }).compile();
    if (extra.http) {
      const app = moduleRef.createNestApplication({ logger: false });
      opened.push(app);
      return app.init();
    }
    opened.push(moduleRef);
    return init ? moduleRef.init() : moduleRef;
  }

  it('with no module running, fails with a DistributedLockError that says to import it', async () => {
    const call = new Worker().work('1');
    await expect(call).rejects.toBeInstanceOf(DistributedLockError);
    await expect(call).rejects.toThrow(/DistributedLockModule/);
  });

  it("each app's instances use that app's module, even with several apps running", async () => {
    const appA = await start();
    const appB = await start();
    const holder = await appA.get(LockService).acquire('work:1');
    const eventsA = collectEvents(appA.get(LockService));
    const eventsB = collectEvents(appB.get(LockService));
    // The stores are separate: A's is busy, B's is free.
    await expect(appA.get(Worker).work('1')).rejects.toMatchObject({ name: 'LockTimeoutError' });
    await expect(appB.get(Worker).work('1')).resolves.toBe('worked');
    expect(eventsA.map((event) => event.type)).toEqual(['timeout']);
    expect(eventsB.map((event) => event.type)).toEqual(['acquired', 'released']);
    await holder.release();
  });

  it('works on a module that was compiled but not initialised, and on objects Nest did not create, when one module runs', async () => {
    const app = await start(false);
    await expect(app.get(Worker).work('2')).resolves.toBe('worked');
    await expect(new Worker().work('2')).resolves.toBe('worked');
  });

  it('objects Nest did not create are ambiguous when several modules run', async () => {
    await start();
    await start();
    await expect(new Worker().work('3')).rejects.toThrow(/several DistributedLockModule/);
  });

  it('a request-scoped controller uses the module serving the request', async () => {
    @Controller({ path: 'scoped', scope: Scope.REQUEST })
    class RequestScoped extends ScopedController {}
    const app = (await start(true, { controllers: [RequestScoped as never], http: true })) as INestApplication;
    await start();
    const events = collectEvents(app.get(LockService));
    await request(app.getHttpServer()).get('/scoped/9').expect(200, { key: 'scoped:9' });
    expect(events.map((event) => event.type)).toEqual(['acquired', 'released']);
  });

  it('a request-scoped service that a handler calls uses the module serving the request', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class ScopedWorker extends Worker {}
    @Controller('work')
    class WorkController {
      constructor(private readonly worker: ScopedWorker) {}
      @Get(':id')
      work(@Param('id') id: string) {
        return this.worker.work(id);
      }
    }
    const app = (await start(true, {
      controllers: [WorkController as never],
      providers: [ScopedWorker as never],
      http: true,
    })) as INestApplication;
    await start();
    const events = collectEvents(app.get(LockService));
    await request(app.getHttpServer()).get('/work/4').expect(200, 'worked');
    expect(events.map((event) => event.type)).toEqual(['acquired', 'released']);
  });

  it('two @Locked() on one method take both locks, one acquisition each', async () => {
    const app = await start();
    const locks = app.get(LockService);
    const events = collectEvents(locks);
    await expect(app.get(Worker).twice(locks)).resolves.toBe('inner');
    expect(events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['outer', 'inner']);
  });
});
