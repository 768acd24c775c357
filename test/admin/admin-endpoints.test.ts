import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLockAdminModule, DistributedLockModule, InvalidLockArgumentError, LockService } from '../../lib/index.js';
import { baseUrl, openRequest, PLATFORMS, startHttpApp, type Platform } from '../nest/http-platform.js';

/** Lets a request through with the header `x-admin: yes`. */
@Injectable()
class AdminHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-admin'] === 'yes';
  }
}

function startApp(admin: Parameters<typeof DistributedLockAdminModule.register>[0], platform: Platform = 'express'): Promise<INestApplication> {
  return startHttpApp(platform, {
    imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'web-1' }), DistributedLockAdminModule.register(admin)],
  });
}

describe.each(PLATFORMS)('DistributedLockAdminModule endpoints on %s', (platform) => {
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => {
    app = await startApp({ path: '/ops/locks', releaseGuards: [AdminHeaderGuard] }, platform);
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
    const csp = response.headers['content-security-policy'] as string;
    expect(csp).toMatch(/default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]+'/);
    const nonce = /nonce-([A-Za-z0-9+/=]+)/.exec(csp)![1]!;
    expect(response.text).toContain(`<script nonce="${nonce}">`);
    // Nothing is loaded from elsewhere.
    expect(response.text).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it('answers list and inspect as JSON', async () => {
    const lock = await locks.acquire('orders:1', { label: 'order 1' });
    const list = await request(baseUrl(app)).get('/ops/locks/api/locks').query({ prefix: 'orders:' }).expect(200);
    expect(list.body.locks).toEqual([expect.objectContaining({ key: 'orders:1', held: true, holders: [expect.objectContaining({ instance: 'web-1', label: 'order 1' })] })]);
    const inspected = await request(baseUrl(app)).get('/ops/locks/api/inspect').query({ key: 'orders:1' }).expect(200);
    expect(inspected.body).toMatchObject({ key: 'orders:1', held: true });
    await request(baseUrl(app)).get('/ops/locks/api/locks').query({ limit: '0' }).expect(400);
    await request(baseUrl(app)).get('/ops/locks/api/inspect').expect(400);
    await lock.release();
  });

  it('releases only through the release guard, and only JSON', async () => {
    const lock = await locks.acquire('orders:2');
    await request(baseUrl(app)).post('/ops/locks/api/release').send({ key: 'orders:2' }).expect(403);
    expect((await locks.inspect('orders:2')).held).toBe(true);
    await request(baseUrl(app)).post('/ops/locks/api/release').set('x-admin', 'yes').type('form').send('key=orders:2').expect(415);
    const released = await request(baseUrl(app)).post('/ops/locks/api/release').set('x-admin', 'yes').send({ key: 'orders:2', reason: 'test' }).expect(200);
    expect(released.body).toEqual({ key: 'orders:2', released: true });
    expect(lock.signal.aborted).toBe(true);
  });
});

describe('DistributedLockAdminModule without guards', () => {
  it('lets operators look but refuses release (403) unless allowUnguardedRelease', async () => {
    const app = await startApp({});
    const lock = await app.get(LockService).acquire('k');
    await request(baseUrl(app)).get('/locks/api/locks').expect(200);
    const refused = await request(baseUrl(app)).post('/locks/api/release').send({ key: 'k' }).expect(403);
    expect(refused.body.message).toContain('register DistributedLockAdminModule with guards');
    expect(lock.signal.aborted).toBe(false);
    await app.close();
  });

  it('refuses bad options at registration', () => {
    expect(() => DistributedLockAdminModule.register({ path: 'locks' })).toThrow(InvalidLockArgumentError);
    expect(() => DistributedLockAdminModule.register({ path: '/a b' })).toThrow(InvalidLockArgumentError);
    expect(() => DistributedLockAdminModule.register({ guards: [42 as never] })).toThrow(InvalidLockArgumentError);
  });
});
