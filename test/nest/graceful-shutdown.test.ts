import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  Controller,
  HttpCode,
  Injectable,
  Param,
  Post,
  Sse,
  type INestApplication,
  type MessageEvent,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import {
  createLockBackend,
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockShuttingDownError,
  LockedJob,
  LockEngine,
  LockLostError,
  LockService,
  MemoryBackend,
  type Lock,
} from '../../lib/index.js';
import { Agent, request as httpRequest } from 'node:http';
import type { LockBackend } from '../../lib/backend.js';
import { LOCK_ENGINE } from '../../lib/nest/lock-constants.js';
import { RedisServer } from '../harness/redis-server.js';
import { hasSettled } from '../support/settled.js';
import { baseUrl, openRequest, startHttpApp } from './http-platform.js';
import { deferred } from './nest-test-kit.js';

/** What a holder saw at the end of its work: whether its lock was still held and its signal quiet. */
interface Finished {
  readonly aborted: boolean;
  readonly nested: string[];
}

/** A holder the test holds open: `entered` once it holds its lock, it finishes when `finish` resolves. */
class Gate {
  readonly entered = deferred<Lock>();
  readonly finish = deferred();
}

const gates = new Map<string, Gate>();
const gate = (name: string): Gate => gates.get(name) ?? (gates.set(name, new Gate()), gates.get(name)!);

@Controller()
class WorkController {
  constructor(private readonly locks: LockService) {}

  /** Holds `work:{id}`; at the end takes the same key again (re-entrant) and a new key (its call chain holds a lock). */
  @Post('work/:id')
  @HttpCode(200)
  @Locked({ key: 'work:{params.id}' })
  async work(@Param('id') id: string): Promise<Finished> {
    const lock = this.locks.current()!;
    gate(`work:${id}`).entered.resolve(lock);
    await gate(`work:${id}`).finish.promise;
    const nested = [
      await this.locks.withLock(`work:${id}`, () => 're-entrant'),
      await this.locks.withLock(`audit:${id}`, () => 'new key'),
    ];
    return { aborted: lock.signal.aborted, nested };
  }

  /** A stream: the lock is kept until its last event is sent. */
  @Sse('stream/:id')
  @Locked({ key: 'stream:{params.id}' })
  stream(@Param('id') id: string): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      const lock = this.locks.current()!;
      subscriber.next({ data: 'first' });
      gate(`stream:${id}`).entered.resolve(lock);
      void gate(`stream:${id}`).finish.promise.then(() => {
        subscriber.next({ data: `last aborted=${lock.signal.aborted}` });
        subscriber.complete();
      });
    });
  }
}

@Injectable()
class Jobs {
  constructor(private readonly locks: LockService) {}

  @LockedJob({ key: 'job:cron', minHoldMs: 1 })
  async cron(): Promise<Finished> {
    return this.hold('job:cron');
  }

  @Locked('job:provider')
  async provider(): Promise<Finished> {
    return this.hold('job:provider');
  }

  withLock(): Promise<Finished> {
    return this.locks.withLock('job:withLock', () => this.hold('job:withLock'));
  }

  /** Works until its lock's signal aborts, as a job that passes `lock.signal` to its work. */
  @Locked('job:stubborn')
  async stubborn(): Promise<string> {
    const lock = this.locks.current()!;
    gate('job:stubborn').entered.resolve(lock);
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    lock.signal.throwIfAborted();
    return 'not reached';
  }

  private async hold(name: string): Promise<Finished> {
    const lock = this.locks.current()!;
    gate(name).entered.resolve(lock);
    await gate(name).finish.promise;
    return { aborted: lock.signal.aborted, nested: [await this.locks.withLock(`${name}:step`, () => 'new key')] };
  }
}

interface Store {
  readonly name: string;
  /** The module's backend option, and a probe engine on the same store (another instance). */
  setup(): Promise<{ backend: LockBackend | { type: 'redis'; url: string }; probe: LockEngine }>;
}

let redis: RedisServer;
const stores: Store[] = [
  {
    name: 'memory',
    setup: async () => {
      const backend = new MemoryBackend();
      const probe = new LockEngine(
        { name: 'memory', claim: (request) => backend.claim(request), close: async () => undefined },
        { waitMs: 0 },
      );
      return { backend, probe };
    },
  },
  {
    name: 'redis',
    setup: async () => ({
      backend: { type: 'redis', url: redis.url },
      probe: new LockEngine(await createLockBackend({ type: 'redis', url: redis.url }), { waitMs: 0 }),
    }),
  },
];

beforeAll(async () => {
  redis = await RedisServer.start();
}, 30_000);
afterAll(() => redis.stop());

const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
const cleanups: (() => Promise<unknown>)[] = [];
beforeEach(() => {
  gates.clear();
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});
afterEach(async () => {
  // A failed test leaves holders open: let them finish so the apps close.
  for (const each of gates.values()) each.finish.resolve();
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
  process.off('unhandledRejection', onRejection);
});

/** A POST on a connection of its own, closed after the answer (a kept-alive one would hold `app.close()` up to the server's keep-alive timeout). */
function post(
  app: INestApplication,
  path: string,
): Promise<{ status: number; retryAfter: string | undefined; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${baseUrl(app)}${path}`,
      { method: 'POST', agent: false, headers: { connection: 'close' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            body: JSON.parse(body),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** Whether `probe` (another instance) gets each key at once, letting it go again. */
async function freeKeys(probe: LockEngine, keys: string[]): Promise<boolean[]> {
  return Promise.all(
    keys.map(async (key) => {
      const lock = await probe.tryAcquire(key);
      await lock?.release();
      return lock !== null;
    }),
  );
}

/** Resolves once the app's lock store has begun to close (its engine refuses new locks from then on). */
function closeBegins(app: INestApplication): Promise<void> {
  const engine = app.get<LockEngine>(LOCK_ENGINE);
  const close = engine.close.bind(engine);
  return new Promise((resolve) => {
    engine.close = (options) => {
      const closing = close(options);
      resolve();
      return closing;
    };
  });
}

describe.each(stores.map((store) => [store.name, store] as const))('app.close() drains on %s', (_name, store) => {
  async function start(gracefulShutdownTimeoutMs?: number) {
    const { backend, probe } = await store.setup();
    cleanups.push(() => probe.close());
    const app = await startHttpApp('express', {
      imports: [
        DistributedLockModule.forRoot({
          backend,
          waitMs: 0,
          leaseMs: 2_000,
          ...(gracefulShutdownTimeoutMs === undefined ? {} : { gracefulShutdownTimeoutMs }),
        }),
      ],
      controllers: [WorkController],
      providers: [Jobs],
    });
    cleanups.push(() => app.close());
    return { app, probe, jobs: app.get(Jobs), locks: app.get(LockService) };
  }

  it('lets requests, streams and jobs inside a lock finish with it, and refuses new locks at once', async () => {
    const { app, probe, jobs, locks } = await start();
    const request = post(app, '/work/a');
    const stream = await openRequest(app, '/stream/b', { agent: false, headers: { connection: 'close' } });
    await stream.waitFor('first');
    const cron = jobs.cron();
    const provider = jobs.provider();
    const withLock = jobs.withLock();
    const held = await Promise.all(
      ['work:a', 'stream:b', 'job:cron', 'job:provider', 'job:withLock'].map((name) => gate(name).entered.promise),
    );
    const keys = held.map((lock) => lock.key);
    // A caller already waiting for a held key, from outside any lock: it goes on waiting.
    const waiting = locks.withLock('work:a', (lock) => ({ aborted: lock.signal.aborted }), { waitMs: 60_000 });

    const began = closeBegins(app);
    const closing = app.close();
    await began;

    // A new lock is refused at once: a 503 with Retry-After on HTTP, saying the instance is shutting down (not that the store is down).
    await expect(locks.acquire('other', { waitMs: 60_000 })).rejects.toThrow(/shutting down/);
    const refused = await post(app, '/work/new');
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'This instance is shutting down',
      code: 'LOCK_SHUTTING_DOWN',
      retryAfter: 1,
    });
    // On a kept-alive connection too, the refusal closes it: the client's next request opens one, which a load balancer sends elsewhere.
    const keptAlive = new Agent({ keepAlive: true });
    const again = await openRequest(app, '/work/new', { method: 'POST', agent: keptAlive });
    expect(again.status).toBe(503);
    expect(again.response.headers.connection).toBe('close');
    await again.ended;
    keptAlive.destroy();

    // Nothing is released while its holder works: another instance cannot take any of the keys.
    expect(await freeKeys(probe, keys)).toEqual(keys.map(() => false));
    expect(held.map((lock) => lock.signal.aborted)).toEqual(keys.map(() => false));
    expect(await hasSettled(closing)).toBe(false);
    expect(await hasSettled(waiting)).toBe(false);

    for (const name of ['work:a', 'job:cron', 'job:provider', 'job:withLock']) gate(name).finish.resolve();
    const response = await request;
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ aborted: false, nested: ['re-entrant', 'new key'] });
    for (const job of [cron, provider, withLock]) expect(await job).toEqual({ aborted: false, nested: ['new key'] });
    // The request's lock went to the caller that was waiting for it when the app began to close.
    expect(await waiting).toEqual({ aborted: false });
    // The stream still holds its lock until its last event is sent.
    expect(await freeKeys(probe, ['stream:b'])).toEqual([false]);
    expect(await hasSettled(closing)).toBe(false);
    gate('stream:b').finish.resolve();
    expect(await stream.ended).toContain('last aborted=false');

    await closing;
    expect(await freeKeys(probe, keys)).toEqual(keys.map(() => true));
    expect(rejections).toEqual([]);
  }, 30_000);

  it('past gracefulShutdownTimeoutMs, aborts the holders that are left and releases their locks', async () => {
    const boundMs = 300;
    const { app, probe, jobs, locks } = await start(boundMs);
    const stubborn = jobs.stubborn().then(
      (value) => value,
      (error: unknown) => error,
    );
    const withLock = locks.withLock('job:stuck', (lock) => {
      gate('job:stuck').entered.resolve(lock);
      return new Promise((resolve) =>
        lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }),
      );
    });
    const [lock] = await Promise.all([gate('job:stubborn').entered.promise, gate('job:stuck').entered.promise]);

    const startedAt = performance.now();
    await app.close();
    const tookMs = performance.now() - startedAt;

    expect(tookMs).toBeGreaterThanOrEqual(boundMs - 5);
    expect(tookMs).toBeLessThan(boundMs + 2_000);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(await stubborn).toBeInstanceOf(LockLostError);
    expect(await withLock).toBeInstanceOf(LockLostError);
    expect(await freeKeys(probe, ['job:stubborn', 'job:stuck'])).toEqual([true, true]);
    expect(rejections).toEqual([]);
  }, 30_000);

  it('past gracefulShutdownTimeoutMs, a call still waiting stops with LockShuttingDownError', async () => {
    const { app, probe, locks } = await start(200);
    const blocker = await probe.acquire('held-elsewhere');
    const waiting = locks.acquire('held-elsewhere', { waitMs: 60_000 }).then(
      () => 'granted',
      (error: unknown) => error,
    );
    await app.close();
    expect(await waiting).toBeInstanceOf(LockShuttingDownError);
    await blocker.release();
  }, 30_000);

  it('returns at once when no lock is held', async () => {
    const { app } = await start(60_000);
    const startedAt = performance.now();
    await app.close();
    expect(performance.now() - startedAt).toBeLessThan(5_000);
  }, 30_000);
});

describe('gracefulShutdownTimeoutMs', () => {
  it.each([-1, Number.NaN, Infinity, '10s', 2 ** 31])('refuses %p at bootstrap', async (value) => {
    const started = startHttpApp('express', {
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' }, gracefulShutdownTimeoutMs: value as number }),
      ],
    });
    await expect(started).rejects.toThrow(InvalidLockArgumentError);
    await expect(started).rejects.toThrow(/gracefulShutdownTimeoutMs/);
  });

  it('LockEngine.close() refuses a bad gracefulMs and revokes at once without one', async () => {
    const engine = new LockEngine(new MemoryBackend());
    await expect(engine.close({ gracefulMs: -1 })).rejects.toThrow(InvalidLockArgumentError);
    const lock = await engine.acquire('k');
    await engine.close();
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
  });

  it('a second close() with a shorter bound ends the drain sooner', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const lock = await engine.acquire('k');
    const first = engine.close({ gracefulMs: 60_000 });
    expect(await hasSettled(first)).toBe(false);
    expect(lock.signal.aborted).toBe(false);
    await engine.close({ gracefulMs: 0 });
    await first;
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
  });
});
