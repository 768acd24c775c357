import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Catch,
  Injectable,
  type ArgumentsHost,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER, BaseExceptionFilter } from '@nestjs/core';
import { filter, firstValueFrom } from 'rxjs';
import request from 'supertest';
import {
  DistributedLockAdminModule,
  DistributedLockModule,
  LockBackendError,
  LockService,
  LockStoreUnavailableException,
  MemoryBackend,
} from '../../lib/index.js';
import { baseUrl, openRequest, PLATFORMS, startHttpApp, type Platform } from '../nest/http-platform.js';

/** Lets a request through with the header `x-admin: yes`. */
@Injectable()
class AdminHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-admin'] === 'yes';
  }
}

function startApp(
  admin: Parameters<typeof DistributedLockAdminModule.register>[0],
  platform: Platform = 'express',
): Promise<INestApplication> {
  return startHttpApp(platform, {
    imports: [
      DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'web-1' }),
      DistributedLockAdminModule.register(admin),
    ],
  });
}

describe.each(PLATFORMS)('DistributedLockAdminModule endpoints on %s', (platform) => {
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => {
    app = await startApp(
      {
        path: '/ops/locks',
        releaseGuards: [AdminHeaderGuard],
        actor: (request: { headers: Record<string, string> }) => request.headers['x-user'],
      },
      platform,
    );
    locks = app.get(LockService);
  });
  afterAll(() => app.close());

  it('streams lock events as server-sent events', async () => {
    const stream = await openRequest(app, '/ops/locks/api/events');
    expect(stream.status).toBe(200);
    expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
    const lock = await locks.acquire('streamed:1', { label: 'sse' });
    const body = await stream.waitFor('"streamed:1"');
    expect(body).toMatch(/event: lock\n(id: \d+\n)?data: \{[^\n]*"type":"acquired"[^\n]*"key":"streamed:1"/);
    stream.abort();
    await lock.release();
  });

  it('serves one self-contained page with a strict Content-Security-Policy', async () => {
    const response = await request(baseUrl(app)).get('/ops/locks').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    const csp = response.headers['content-security-policy'];
    expect(csp).toMatch(/default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]+'/);
    const nonce = /nonce-([A-Za-z0-9+/=]+)/.exec(csp)![1];
    expect(response.text).toContain(`<script nonce="${nonce}">`);
    // Nothing is loaded from elsewhere.
    expect(response.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it('answers list and inspect as JSON', async () => {
    const lock = await locks.acquire('orders:1', { label: 'order 1' });
    const list = await request(baseUrl(app)).get('/ops/locks/api/locks').query({ prefix: 'orders:' }).expect(200);
    expect(list.body.locks).toEqual([
      expect.objectContaining({
        key: 'orders:1',
        held: true,
        holders: [expect.objectContaining({ instance: 'web-1', label: 'order 1' })],
      }),
    ]);
    const inspected = await request(baseUrl(app)).get('/ops/locks/api/inspect').query({ key: 'orders:1' }).expect(200);
    expect(inspected.body).toMatchObject({ key: 'orders:1', held: true });
    await request(baseUrl(app)).get('/ops/locks/api/locks').query({ limit: '0' }).expect(400);
    await request(baseUrl(app)).get('/ops/locks/api/inspect').expect(400);
    await lock.release();
  });

  it('releases only through the release guard, only JSON, only with a reason, never from another site', async () => {
    const lock = await locks.acquire('orders:2');
    const release = () => request(baseUrl(app)).post('/ops/locks/api/release');
    await release().send({ key: 'orders:2', reason: 'test' }).expect(403);
    expect((await locks.inspect('orders:2')).held).toBe(true);
    await release().set('x-admin', 'yes').type('form').send('key=orders:2&reason=test').expect(415);
    for (const body of [{ key: 'orders:2' }, { key: 'orders:2', reason: '' }, { key: 'orders:2', reason: ' \n ' }]) {
      const refused = await release().set('x-admin', 'yes').send(body).expect(400);
      expect(refused.body.message).toContain('non-empty reason');
    }
    await release()
      .set('x-admin', 'yes')
      .set('sec-fetch-site', 'cross-site')
      .send({ key: 'orders:2', reason: 'test' })
      .expect(403);
    expect(lock.signal.aborted).toBe(false);
    const event = firstValueFrom(locks.events.pipe(filter((e) => e.type === 'force-released')));
    const released = await release()
      .set('x-admin', 'yes')
      .set('x-user', 'alice@example.com')
      .set('sec-fetch-site', 'same-origin')
      .send({ key: 'orders:2', reason: ' stuck ' })
      .expect(200);
    expect(released.body).toEqual({ key: 'orders:2', released: true });
    expect(lock.signal.aborted).toBe(true);
    expect(await event).toMatchObject({
      key: 'orders:2',
      by: 'web-1',
      reason: 'stuck',
      actor: 'alice@example.com',
      evicted: [{ instance: 'web-1', fence: lock.fence }],
    });
  });

  it('answers 503 with LockStoreUnavailableException when the store cannot be reached (its address stays out of the body)', async () => {
    const backend = new MemoryBackend();
    const down = () => Promise.reject(new LockBackendError('memory', 'connect ECONNREFUSED 10.0.0.9:6379'));
    Object.defineProperty(backend, 'inspection', { value: { inspect: down, list: down, forceRelease: down } });
    const caught: unknown[] = [];
    @Catch(LockStoreUnavailableException)
    class Recorder extends BaseExceptionFilter {
      override catch(exception: unknown, host: ArgumentsHost): void {
        caught.push(exception);
        super.catch(exception, host);
      }
    }
    const broken = await startHttpApp(platform, {
      imports: [
        DistributedLockModule.forRoot({ backend, instance: 'web-1' }),
        DistributedLockAdminModule.register({ guards: [AdminHeaderGuard] }),
      ],
      providers: [{ provide: APP_FILTER, useClass: Recorder }],
    });
    const answer = await request(baseUrl(broken)).get('/locks/api/locks').set('x-admin', 'yes').expect(503);
    expect(answer.body.message).toBe('The lock store is unavailable');
    expect(JSON.stringify(answer.body)).not.toContain('10.0.0.9');
    await request(baseUrl(broken))
      .post('/locks/api/release')
      .set('x-admin', 'yes')
      .send({ key: 'k', reason: 'r' })
      .expect(503);
    expect(caught).toHaveLength(2);
    await broken.close();
  });
});
