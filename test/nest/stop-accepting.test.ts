import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Param, Res, type DynamicModule, type INestApplication } from '@nestjs/common';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  DistributedLockModule,
  getLockEngineToken,
  LockService,
  type DistributedLockModuleOptions,
} from '../../lib/index.js';
import { PLATFORMS, startHttpApp, type Platform } from './http-platform.js';
import { deferred } from './nest-test-kit.js';

/** A request the test holds open: `entered` once the handler runs, it goes on when `finish` resolves. */
class Gate {
  readonly entered = deferred();
  readonly finish = deferred();
}
let gates = new Map<string, Gate>();
const gate = (id: string): Gate => gates.get(id) ?? (gates.set(id, new Gate()), gates.get(id)!);

@Controller()
class OrdersController {
  constructor(private readonly locks: LockService) {}

  /** Waits for the test, then takes a new lock: what a request received before shutdown does once its work begins. */
  @Get('slow/:id')
  async slow(@Param('id') id: string): Promise<{ locked: boolean } | { refused: string }> {
    gate(id).entered.resolve();
    await gate(id).finish.promise;
    return this.locks
      .withLock(`order:${id}`, () => ({ locked: true }))
      .catch((error: Error) => ({ refused: error.name }));
  }

  @Get('fast')
  fast(): { ok: true } {
    return { ok: true };
  }

  /** A streamed answer whose headers go out at once: its connection cannot be told `Connection: close` any more. */
  @Get('stream/:id')
  async stream(
    @Param('id') id: string,
    @Res() reply: ServerResponse | { raw: ServerResponse; hijack(): void },
  ): Promise<void> {
    const raw = 'raw' in reply ? (reply.hijack(), reply.raw) : reply;
    raw.writeHead(200, { 'content-type': 'text/plain' });
    raw.write('first\n');
    gate(id).entered.resolve();
    await gate(id).finish.promise;
    raw.end('last\n');
  }
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's end of the connection the answer came on. */
  socket: Socket;
}

function get(app: INestApplication, path: string, agent: Agent): Promise<Answer> {
  const { port } = app.getHttpServer().address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body, socket: request.socket! }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

/** Resolves once the client's end of `socket` has been closed (by the server). */
const closed = (socket: Socket): Promise<void> =>
  socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));

/** Whether a new connection to the app's port is refused. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/fast', agent: false }, (response) => {
      response.resume();
      resolve(false);
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    request.end();
  });
}

const apps: INestApplication[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const gateOpen of gates.values()) gateOpen.finish.resolve();
  gates = new Map();
  await Promise.allSettled(apps.splice(0).map((app) => app.close()));
  for (const agent of agents.splice(0)) agent.destroy();
});

interface Started {
  app: INestApplication;
  port: number;
  agent: Agent;
  /** The HTTP server's close() was called: from then on new connections are refused. */
  closeCalled: Promise<void>;
  /** The lock store began to drain (its engine's close()): from then on new locks are refused. */
  drainBegan: Promise<void>;
}

/** Resolves when `object[method]` is first called; the call goes through unchanged (observed, not replaced). */
function calledOnce(object: object, method: string): Promise<void> {
  const target = object as Record<string, (...args: unknown[]) => unknown>;
  const original = target[method].bind(object);
  const called = deferred();
  target[method] = (...args: unknown[]) => (called.resolve(), original(...args));
  return called.promise;
}

async function start(platform: Platform, lockModule: DynamicModule): Promise<Started> {
  const app = await startHttpApp(platform, { imports: [lockModule], controllers: [OrdersController] });
  apps.push(app);
  const agent = new Agent({ keepAlive: true });
  agents.push(agent);
  const port = (app.getHttpServer().address() as AddressInfo).port;
  return {
    app,
    port,
    agent,
    closeCalled: calledOnce(app.getHttpServer(), 'close'),
    drainBegan: calledOnce(app.get(getLockEngineToken()), 'close'),
  };
}

const withOptions = (options: Partial<DistributedLockModuleOptions>) =>
  DistributedLockModule.forRoot({ backend: { type: 'memory' }, ...options });

describe.each(PLATFORMS)('stopAcceptingOnShutdown on %s', (platform) => {
  it('answers a request under way at app.close() before the store drains: it takes its lock, its answer says Connection: close, and new connections are refused meanwhile', async () => {
    const { app, port, agent, closeCalled } = await start(platform, withOptions({ stopAcceptingOnShutdown: true }));
    const answer = get(app, '/slow/1', agent);
    await gate('1').entered.promise;
    let appClosed = false;
    const closing = app.close().then(() => (appClosed = true));
    await closeCalled;
    expect(await refusesConnections(port)).toBe(true);
    expect(appClosed).toBe(false);
    gate('1').finish.resolve();
    const { status, headers, body, socket } = await answer;
    expect({ status, body: JSON.parse(body), connection: headers.connection }).toEqual({
      status: 200,
      body: { locked: true },
      connection: 'close',
    });
    await closed(socket);
    await closing;
  });

  it('closes idle kept-alive connections at once, while a request under way is still being answered', async () => {
    const { app, agent, closeCalled } = await start(platform, withOptions({ stopAcceptingOnShutdown: true }));
    const idle = await get(app, '/fast', agent);
    expect(idle.headers.connection).toBe('keep-alive');
    const busyAgent = new Agent({ keepAlive: true });
    agents.push(busyAgent);
    const underWay = get(app, '/slow/2', busyAgent);
    await gate('2').entered.promise;
    const closing = app.close();
    await closeCalled;
    await closed(idle.socket);
    gate('2').finish.resolve();
    expect(JSON.parse((await underWay).body)).toEqual({ locked: true });
    await closing;
  });

  it('closes a connection whose streamed answer began before shutdown as soon as that answer ends, not when the server closes after the drain', async () => {
    const { app, agent, closeCalled } = await start(
      platform,
      withOptions({ stopAcceptingOnShutdown: true, gracefulShutdownTimeoutMs: 3_000 }),
    );
    // A job's lock keeps the drain (and so the server's own close after it) waiting until the test lets it go.
    const job = await app.get(LockService).acquire('nightly-job');
    const streamed = get(app, '/stream/3', agent);
    await gate('3').entered.promise;
    const closing = app.close();
    await closeCalled;
    gate('3').finish.resolve();
    const { body, headers, socket } = await streamed;
    expect(body).toBe('first\nlast\n');
    expect(headers.connection).toBe('keep-alive');
    await closed(socket);
    expect(job.signal.aborted).toBe(false);
    await job.release();
    await closing;
  });

  it('waits at most gracefulShutdownTimeoutMs: a request still under way then meets the drain', async () => {
    const { app, agent, drainBegan } = await start(
      platform,
      withOptions({ stopAcceptingOnShutdown: true, gracefulShutdownTimeoutMs: 300 }),
    );
    const answer = get(app, '/slow/4', agent);
    await gate('4').entered.promise;
    const startedAt = performance.now();
    const closing = app.close();
    await drainBegan;
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(299);
    gate('4').finish.resolve();
    expect(JSON.parse((await answer).body)).toEqual({ refused: 'LockShuttingDownError' });
    await closing;
  });

  it('without it (the default), the store drains while the request is under way: its new lock is refused', async () => {
    const { app, agent, drainBegan } = await start(platform, withOptions({}));
    const answer = get(app, '/slow/5', agent);
    await gate('5').entered.promise;
    const closing = app.close();
    await drainBegan;
    gate('5').finish.resolve();
    expect(JSON.parse((await answer).body)).toEqual({ refused: 'LockShuttingDownError' });
    await closing;
  });
});

describe('stopAcceptingOnShutdown, the option', () => {
  it('comes from a forRootAsync() factory too', async () => {
    const lockModule = DistributedLockModule.forRootAsync({
      useFactory: () => ({ backend: { type: 'memory' }, stopAcceptingOnShutdown: true }),
    });
    const { app, agent, closeCalled } = await start('express', lockModule);
    const answer = get(app, '/slow/6', agent);
    await gate('6').entered.promise;
    const closing = app.close();
    await closeCalled;
    gate('6').finish.resolve();
    expect(JSON.parse((await answer).body)).toEqual({ locked: true });
    await closing;
  });
});
