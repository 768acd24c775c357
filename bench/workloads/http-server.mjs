// Workload 4, server side (a child process): a Nest app with identical endpoints: `locked` guarded
// by @Locked (one fresh key per request id, memory or redis backend), `handwritten` guarded by the
// minimal interceptor a user would write by hand (engine.withLock around next.handle(), which
// releases when the handler's Observable completes), and `plain` with no lock. Prints its port.
// Three more endpoints break the cost of the lock down (bench/workloads/http-floor.mjs): `als`
// only runs the handler inside an AsyncLocalStorage, `acquire` awaits acquire + release around it
// (no async context), `floor` runs it in engine.withLock (what any lock that `current()` can see
// costs at least). Each measurement runs in a fresh process, so one route's AsyncLocalStorage
// does not slow the others. NDL_BENCH_NOOP_INTERCEPTOR=1 adds a global interceptor that does nothing (bench/ab-http.mjs).
import 'reflect-metadata';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, Get, Injectable, Module, Param, UseInterceptors } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { from, lastValueFrom } from 'rxjs';
import { loadPackage } from '../lib/package-under-test.mjs';

export async function startHttpApp({ backend }) {
  const { DistributedLockModule, Locked, getLockEngineToken } = await loadPackage();
  let engine;
  const storage = new AsyncLocalStorage();
  const handler = (id) => ({ id });
  class HandWrittenLockInterceptor {
    intercept(context, next) {
      const { id } = context.switchToHttp().getRequest().params;
      return from(engine.withLock(`item:${id}`, () => lastValueFrom(next.handle())));
    }
  }
  Reflect.decorate([Injectable()], HandWrittenLockInterceptor);
  class ItemsController {
    plain(id) {
      return handler(id);
    }
    locked(id) {
      return handler(id);
    }
    handwritten(id) {
      return handler(id);
    }
    async als(id) {
      return storage.run(id, () => handler(id));
    }
    async acquire(id) {
      const lock = await engine.acquire(`item:${id}`);
      try {
        return handler(id);
      } finally {
        await lock.release();
      }
    }
    async floor(id) {
      return engine.withLock(`item:${id}`, () => handler(id));
    }
  }
  // What `@Get('plain/:id') plain(@Param('id') id)` and `@Get('locked/:id') @Locked('item:{params.id}') locked(...)` compile to.
  const decorate = (name, decorators) => {
    const descriptor = Reflect.decorate(
      decorators,
      ItemsController.prototype,
      name,
      Object.getOwnPropertyDescriptor(ItemsController.prototype, name),
    );
    Object.defineProperty(ItemsController.prototype, name, descriptor);
  };
  const param = (decorator) => (target, key) => decorator(target, key, 0);
  decorate('plain', [Get('plain/:id'), param(Param('id'))]);
  decorate('locked', [Get('locked/:id'), Locked('item:{params.id}'), param(Param('id'))]);
  decorate('handwritten', [Get('handwritten/:id'), UseInterceptors(HandWrittenLockInterceptor), param(Param('id'))]);
  for (const name of ['als', 'acquire', 'floor']) decorate(name, [Get(`${name}/:id`), param(Param('id'))]);
  Reflect.decorate([Controller('items')], ItemsController);

  class AppModule {}
  Reflect.decorate(
    [Module({ imports: [DistributedLockModule.forRoot({ backend })], controllers: [ItemsController] })],
    AppModule,
  );
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  if (process.env.NDL_BENCH_NOOP_INTERCEPTOR)
    app.useGlobalInterceptors({ intercept: (_context, next) => next.handle() });
  engine = app.get(getLockEngineToken());
  await app.listen(0, '127.0.0.1');
  return { port: app.getHttpServer().address().port, close: () => app.close() };
}
