import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How long shutdown waits for the requests already received to be answered (as long as the lock store's drain). */
const ANSWER_BOUND_MS = 10_000;

/**
 * On shutdown, stops taking requests before anything else closes, and lets the requests already
 * received be answered: a load balancer then sends new requests to the other instances. It stops
 * listening, closes idle kept-alive connections, answers the requests under way with
 * `Connection: close` (so no client sends another on their connections), and waits for them. The
 * lock store drains after it (`beforeApplicationShutdown` runs after every `onModuleDestroy`), for
 * work that is not a request (jobs); a request that reached this instance after that would find the
 * store refusing new locks (503), which is why the requests are let through here first.
 */
@Injectable()
export class StopAcceptingOnShutdown implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly underWay = new Set<ServerResponse>();
  private closing = false;
  private answered: (() => void) | undefined;

  constructor(private readonly host: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    this.server()?.on('request', (_request: IncomingMessage, response: ServerResponse) => {
      this.underWay.add(response);
      if (this.closing) response.shouldKeepAlive = false;
      response.once('close', () => {
        this.underWay.delete(response);
        if (this.underWay.size === 0) this.answered?.();
      });
    });
  }

  async onModuleDestroy(): Promise<void> {
    const server = this.server();
    if (!server?.listening) return;
    this.closing = true;
    server.close();
    server.closeIdleConnections();
    for (const response of this.underWay) if (!response.headersSent) response.shouldKeepAlive = false;
    if (this.underWay.size === 0) return;
    await new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, ANSWER_BOUND_MS);
      this.answered = () => {
        clearTimeout(bound);
        resolve();
      };
    });
  }

  private server(): Server | undefined {
    return this.host.httpAdapter?.getHttpServer() as Server | undefined;
  }
}
