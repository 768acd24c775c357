// Workload 4, server side (a child process): a Nest app with two identical endpoints, one guarded
// by @Locked (one fresh key per request id, memory or redis backend) and one not. Prints its port.
import 'reflect-metadata';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadPackage } from '../lib/package-under-test.mjs';

export async function startHttpApp({ backend }) {
  const { DistributedLockModule, Locked } = await loadPackage();
  class ItemsController {
    plain(id) {
      return { id };
    }
    locked(id) {
      return { id };
    }
  }
  // What `@Get('plain/:id') plain(@Param('id') id)` and `@Get('locked/:id') @Locked('item:{params.id}') locked(...)` compile to.
  const decorate = (name, decorators) => {
    const descriptor = Reflect.decorate(decorators, ItemsController.prototype, name, Object.getOwnPropertyDescriptor(ItemsController.prototype, name));
    Object.defineProperty(ItemsController.prototype, name, descriptor);
  };
  const param = (decorator) => (target, key) => decorator(target, key, 0);
  decorate('plain', [Get('plain/:id'), param(Param('id'))]);
  decorate('locked', [Get('locked/:id'), Locked('item:{params.id}'), param(Param('id'))]);
  Reflect.decorate([Controller('items')], ItemsController);

  class AppModule {}
  Reflect.decorate([Module({ imports: [DistributedLockModule.forRoot({ backend })], controllers: [ItemsController] })], AppModule);
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  return { port: app.getHttpServer().address().port, close: () => app.close() };
}
