import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';

/**
 * On shutdown, stops taking new connections before anything else closes: a load balancer then
 * sends new requests to the other instances, while the requests under way here finish with their
 * locks (the lock store drains in `beforeApplicationShutdown`, after every `onModuleDestroy`).
 * Nest itself closes the server only after the drain, and a request it took meanwhile would find
 * the lock store refusing new locks (503).
 */
@Injectable()
export class StopAcceptingOnShutdown implements OnModuleDestroy {
  constructor(private readonly host: HttpAdapterHost) {}

  onModuleDestroy(): void {
    const server = this.host.httpAdapter?.getHttpServer() as Server | undefined;
    if (server?.listening) server.close();
  }
}
