// One contender's Nest 11 (Express) app for bench/nest/run.mjs: POST /items/:id/buy under the
// contender's own lock decorator. Env: CONTENDER, PORT, REDIS_URL, LIB (our build's esm/index.js),
// WORKLOAD ('distinct': the handler does no work; 'hot': it sells one item with a read-then-write
// on a stock counter in Redis, which only a working lock keeps correct).
import 'reflect-metadata';
import { Controller, Inject, Injectable, Module, Param, Post, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import Redis from 'ioredis';
import { catchError, concatMap, from, mergeMap, throwError } from 'rxjs';

const { CONTENDER, PORT, REDIS_URL, LIB, WORKLOAD, ALLOC_PROFILE } = process.env;
const LEASE_MS = 5000;
const WAIT_MS = 10_000;

/** TypeScript's legacy decorator order: the last listed is applied first; parameter decorators before the method's. */
function decorate(cls, method, decorators, params = []) {
  let descriptor = Object.getOwnPropertyDescriptor(cls.prototype, method);
  for (const [index, param] of params.entries()) param(cls.prototype, method, index);
  for (const decorator of [...decorators].reverse())
    descriptor = decorator(cls.prototype, method, descriptor) ?? descriptor;
  Object.defineProperty(cls.prototype, method, descriptor);
  return cls;
}

const stockClient = new Redis(REDIS_URL);

/** The handler: nothing for distinct keys; one sale (read, then write) of the hot item. */
let sold = 0;
let handled = 0;
async function sell(id) {
  handled++;
  if (WORKLOAD !== 'hot') return { id };
  const stock = Number(await stockClient.get(`stock:${id}`));
  await stockClient.set(`stock:${id}`, stock - 1);
  sold++;
  return { id, stock: stock - 1 };
}
/** Bytes allocated on the JS heap so far: the heap's growth between collections, from V8's GC profiler (does not depend on the machine's load). */
let gcProfiler = new v8.GCProfiler();
gcProfiler.start();
let allocated = 0;
let lastUsed = v8.getHeapStatistics().used_heap_size;
function allocatedSoFar() {
  for (const gc of gcProfiler.stop().statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - lastUsed;
    lastUsed = gc.afterGC.heapStatistics.usedHeapSize;
  }
  gcProfiler = new v8.GCProfiler();
  gcProfiler.start();
  const used = v8.getHeapStatistics().used_heap_size;
  allocated += used - lastUsed;
  lastUsed = used;
  return allocated;
}
// With ALLOC_PROFILE (a file), V8's sampling heap profiler records what the measured requests allocate, by
// function, objects already collected included: from the runner's first 'stats' to its second.
const allocations = ALLOC_PROFILE ? new Session() : undefined;
let handledAtStart;
async function allocationProfile(stats) {
  if (!allocations) return;
  if (handledAtStart === undefined) {
    handledAtStart = stats.handled;
    allocations.connect();
    await allocations.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  const { profile } = await allocations.post('HeapProfiler.stopSampling');
  writeFileSync(
    ALLOC_PROFILE,
    JSON.stringify({ contender: CONTENDER, requests: stats.handled - handledAtStart, profile }),
  );
}
// The runner asks for the sales made, the requests handled, the CPU spent and the bytes allocated so far.
process.on('message', async (message) => {
  if (message !== 'stats') return;
  const stats = { sold, handled, cpu: process.cpuUsage(), allocated: allocatedSoFar() };
  await allocationProfile(stats);
  process.send(stats);
});

class ItemsController {
  constructor(locks) {
    this.locks = locks;
  }
  async buy(id) {
    return sell(id);
  }
}

/** The hand-written interceptor a team might write: SET NX PX, retry, Lua compare-and-delete at the end. */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
class HandLockInterceptor {
  constructor() {
    this.redis = new Redis(REDIS_URL);
  }
  async intercept(context, next) {
    const key = `hand:item:${context.switchToHttp().getRequest().params.id}`;
    const token = randomUUID();
    const deadline = Date.now() + WAIT_MS;
    while ((await this.redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') {
      if (Date.now() > deadline) throw new Error(`lock ${key} busy`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const release = () => this.redis.eval(RELEASE, 1, key, token);
    return next.handle().pipe(
      concatMap(async (value) => {
        await release();
        return value;
      }),
      catchError((error) => from(release()).pipe(mergeMap(() => throwError(() => error)))),
    );
  }
}
Injectable()(HandLockInterceptor);

/** An interceptor that does nothing: what Nest's interceptor pipeline costs any route that has one. */
class NoopInterceptor {
  intercept(_context, next) {
    return next.handle();
  }
}
Injectable()(NoopInterceptor);
class NoopInterceptor2 extends NoopInterceptor {}
Injectable()(NoopInterceptor2);

async function contender() {
  const route = [Post(':id/buy')];
  // ours-service, ours-service-nomap, and another build named <name>-service(-nomap) (run.mjs --build).
  const service = CONTENDER.endsWith('-service') || CONTENDER.endsWith('-service-nomap');
  switch (service ? 'service' : CONTENDER) {
    case 'none':
      return { imports: [], decorators: route };
    case 'none-als':
      // No lock, an AsyncLocalStorage in use (as this library's re-entrancy uses one): what Node's promise hooks cost the route.
      new AsyncLocalStorage().enterWith({});
      return { imports: [], decorators: route };
    case 'noop-als':
      // The same, with an AsyncLocalStorage in use (as this library's re-entrancy uses one): Node then runs its promise hooks on every promise.
      new AsyncLocalStorage().enterWith({});
      return { imports: [], decorators: [...route, UseInterceptors(NoopInterceptor)], providers: [NoopInterceptor] };
    case 'noop':
      return { imports: [], decorators: [...route, UseInterceptors(NoopInterceptor)], providers: [NoopInterceptor] };
    case 'noop2':
      // Two of them: what a second interceptor level (one more on the same route) costs.
      return {
        imports: [],
        decorators: [...route, UseInterceptors(NoopInterceptor, NoopInterceptor2)],
        providers: [NoopInterceptor, NoopInterceptor2],
      };
    case 'hand':
      return {
        imports: [],
        decorators: [...route, UseInterceptors(HandLockInterceptor)],
        providers: [HandLockInterceptor],
      };
    case 'murlock': {
      const { MurLock, MurLockModule } = await import('murlock');
      const module = MurLockModule.forRoot({
        redisOptions: { url: REDIS_URL },
        wait: 50,
        maxAttempts: 20,
        logLevel: 'none',
        ignoreUnlockFail: false,
        failFastOnRedisError: false,
        blocking: false,
      });
      return { imports: [module], decorators: [...route, MurLock(LEASE_MS, 'id')] };
    }
    case 'anchan828': {
      // Its ESM build does not load (extension-less imports): the CommonJS one, as a Nest app built to CommonJS loads it.
      const { Redlock, RedlockModule } = createRequire(import.meta.url)('@anchan828/nest-redlock');
      const module = RedlockModule.register({
        clients: [new Redis(REDIS_URL)],
        settings: {
          driftFactor: 0.01,
          retryCount: 50,
          retryDelay: 200,
          retryJitter: 200,
          automaticExtensionThreshold: 500,
        },
        duration: LEASE_MS,
      });
      return { imports: [module], decorators: [...route, Redlock((_target, id) => `item:${id}`)] };
    }
    case 'universal': {
      const { Redlock, RedlockModule, IoredisAdapter } = await import('nestjs-redlock-universal');
      const module = RedlockModule.forRoot({
        nodes: [new IoredisAdapter(new Redis(REDIS_URL))],
        defaultTtl: LEASE_MS,
        retryAttempts: 50,
        retryDelay: 200,
      });
      return { imports: [module], decorators: [...route, Redlock({ key: (id) => `item:${id}` })] };
    }
    case 'ours-unlocked': {
      // This library's module imported (as an app that locks elsewhere has it), the route itself locking nothing.
      const { DistributedLockModule } = await import(pathToFileURL(LIB).href);
      return {
        imports: [DistributedLockModule.forRoot({ backend: { type: 'redis', url: REDIS_URL } })],
        decorators: route,
      };
    }
    case 'service': {
      // The same engine without @Locked: the handler takes the lock itself (LockService.withLock), no interceptor, no method wrapper.
      const { DistributedLockModule, LockService } = await import(pathToFileURL(LIB).href);
      const module = DistributedLockModule.forRoot({
        backend: { type: 'redis', url: REDIS_URL },
        ...(CONTENDER.endsWith('-nomap') ? { mapErrors: false } : {}),
      });
      Inject(LockService)(ItemsController, undefined, 0);
      ItemsController.prototype.buy = function buy(id) {
        return this.locks.withLock(`item:${id}`, () => sell(id), { leaseMs: LEASE_MS, waitMs: WAIT_MS });
      };
      return { imports: [module], decorators: route };
    }
    default: {
      // 'ours', or any other name for another build of this library (LIB points at its esm/index.js).
      const { DistributedLockModule, Locked } = await import(pathToFileURL(LIB).href);
      const module = DistributedLockModule.forRoot({
        backend: { type: 'redis', url: REDIS_URL },
        ...(CONTENDER === 'ours-nomap' ? { mapErrors: false } : {}),
      });
      return {
        imports: [module],
        decorators: [...route, Locked({ key: 'item:{params.id}', leaseMs: LEASE_MS, waitMs: WAIT_MS })],
      };
    }
  }
}

const setup = await contender();
decorate(ItemsController, 'buy', setup.decorators, [Param('id')]);
Controller('items')(ItemsController);
class AppModule {}
Module({ imports: setup.imports, controllers: [ItemsController], providers: setup.providers ?? [] })(AppModule);

const app = await NestFactory.create(AppModule, { logger: ['error'] });
// process.exit (not a re-raised signal) so that --cpu-prof / --heap-prof write their profiles.
process.once('SIGTERM', () => app.close().finally(() => process.exit(0)));
await app.listen(Number(PORT), '127.0.0.1');
process.send?.({ ready: true });
