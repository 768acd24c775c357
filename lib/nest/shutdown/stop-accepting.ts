import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ShutdownMessages } from './shutdown-messages.js';
import { withinMs } from '../../util/time-limit.js';

/** The servers a `StopAcceptingOnShutdown` looks after: one per server, however many stores ask for it. */
const claimed = new WeakSet<object>();

/**
 * @internal The module option `stopAcceptingOnShutdown`. On shutdown (`onModuleDestroy`, which
 * Nest runs before every `beforeApplicationShutdown`, so before the lock store drains) the HTTP
 * server stops listening and closes its idle kept-alive connections; the requests it has already
 * received are answered with `Connection: close`, and shutdown waits for them (at most `boundMs`).
 * Only then does the store drain and refuse new locks: no request that reached this instance meets
 * the drain, and a load balancer sends new connections to the other instances.
 */
export class StopAcceptingOnShutdown implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly underWay = new Set<ServerResponse>();
  private server: Server | undefined;
  private closing = false;
  private answered: (() => void) | undefined;

  constructor(
    private readonly host: HttpAdapterHost,
    /** How long shutdown waits for the requests under way: the store's `gracefulShutdownTimeoutMs`. */
    private readonly boundMs: number,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.host.httpAdapter?.getHttpServer() as Server | undefined;
    // An application context without HTTP, or a server another store already looks after.
    if (typeof server?.on !== 'function' || claimed.has(server)) return;
    claimed.add(server);
    this.server = server;
    server.on('request', this.track);
  }

  async onModuleDestroy(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    this.closing = true;
    // Node's close() also closes the connections that are idle now.
    server.close();
    for (const response of this.underWay) answerLast(response);
    if (this.underWay.size === 0 || this.boundMs === 0) return;
    const startedAt = performance.now();
    const allAnswered = new Promise<void>((resolve) => (this.answered = resolve));
    const answered = await withinMs(allAnswered, this.boundMs).then(
      () => true,
      () => false,
    );
    this.answered = undefined;
    if (!answered)
      new Logger('DistributedLock').warn(
        ShutdownMessages.stillUnderWay(this.underWay.size, Math.round(performance.now() - startedAt)),
      );
  }

  private readonly track = (_request: IncomingMessage, response: ServerResponse): void => {
    this.underWay.add(response);
    if (this.closing) answerLast(response);
    response.once('close', () => {
      this.underWay.delete(response);
      if (!this.closing) return;
      // A response that began before shutdown kept its connection open: close it now that it is idle.
      closeIdle(this.server);
      if (this.underWay.size === 0) this.answered?.();
    });
  };
}

/** The response closes its connection once sent (`Connection: close`), unless its headers are already out. */
function answerLast(response: ServerResponse): void {
  if (!response.headersSent) response.shouldKeepAlive = false;
}

function closeIdle(server: Server | undefined): void {
  // An HTTP/2 server has no idle HTTP/1 connections to close.
  if (typeof server?.closeIdleConnections === 'function') server.closeIdleConnections();
}
