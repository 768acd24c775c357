import { describe, expect, it } from '@jest/globals';
import type { INestApplication, LoggerService } from '@nestjs/common';
import request from 'supertest';
import {
  DistributedLockAdminModule,
  DistributedLockModule,
  InvalidLockArgumentError,
  LockService,
  getLockServiceToken,
} from '../../lib/index.js';
import { baseUrl, PLATFORMS, startHttpApp, type Platform } from '../nest/http-platform.js';

/** Keeps the warnings Nest's Logger is given. */
function warningsOf(): LoggerService & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    log: () => undefined,
    error: () => undefined,
    warn: (message: unknown) => void warnings.push(String(message)),
  };
}

async function startApp(
  admin: Parameters<typeof DistributedLockAdminModule.register>[0],
  platform: Platform = 'express',
  logger?: LoggerService,
): Promise<INestApplication> {
  return startHttpApp(
    platform,
    {
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' }, instance: 'web-1' }),
        DistributedLockModule.forRoot({ name: 'critical', backend: { type: 'memory' }, instance: 'web-1' }),
        DistributedLockAdminModule.register(admin),
      ],
    },
    (app) => logger && app.useLogger(logger),
  );
}

describe('DistributedLockAdminModule options', () => {
  it('refuses bad and unknown options at registration, naming the option', () => {
    const refused = (options: object) => () => DistributedLockAdminModule.register(options);
    expect(refused({ path: 'locks' })).toThrow(InvalidLockArgumentError);
    expect(refused({ path: '/a b' })).toThrow(InvalidLockArgumentError);
    expect(refused({ guards: [42] })).toThrow(InvalidLockArgumentError);
    expect(refused({ gaurds: [] })).toThrow(/unknown option "gaurds"/);
    expect(refused({ readOnly: 'yes' })).toThrow(/readOnly must be a boolean/);
    expect(refused({ actor: 'alice' })).toThrow(/actor must be a function/);
    expect(refused({ store: '' })).toThrow(/store must be/);
  });

  it('warns at bootstrap when the page has no guards, and lets operators look but refuses release (403) unless allowUnguardedRelease', async () => {
    const logger = warningsOf();
    const app = await startApp({}, 'express', logger);
    expect(logger.warnings).toEqual([expect.stringContaining('The lock admin page at /locks has no guards')]);
    const lock = await app.get(LockService).acquire('k');
    await request(baseUrl(app)).get('/locks/api/locks').expect(200);
    const refused = await request(baseUrl(app)).post('/locks/api/release').send({ key: 'k', reason: 'r' }).expect(403);
    expect(refused.body.message).toContain('register DistributedLockAdminModule with guards');
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
    await app.close();
  });

  it('does not warn when guards protect the page', async () => {
    const logger = warningsOf();
    const app = await startApp({ guards: [{ canActivate: () => true }] }, 'express', logger);
    expect(logger.warnings).toEqual([]);
    await app.close();
  });

  it("offers every store of the app, the module's `store` first, by `?store=`; an unknown store is 404", async () => {
    const app = await startApp({ store: 'critical', guards: [{ canActivate: () => true }] });
    const critical = await app.get<LockService>(getLockServiceToken('critical')).acquire('payments:1');
    const plain = await app.get(LockService).acquire('emails:1');
    const stores = await request(baseUrl(app)).get('/locks/api/stores').expect(200);
    expect(stores.body).toEqual({ stores: ['critical', 'default'] });
    const keys = async (query: Record<string, string>) =>
      (await request(baseUrl(app)).get('/locks/api/locks').query(query).expect(200)).body.locks.map(
        (lock: { key: string }) => lock.key,
      );
    expect(await keys({})).toEqual(['payments:1']);
    expect(await keys({ store: 'default' })).toEqual(['emails:1']);
    const page = await request(baseUrl(app)).get('/locks').expect(200);
    expect(page.text).toContain('"stores":["critical","default"]');
    const unknown = await request(baseUrl(app)).get('/locks/api/locks').query({ store: 'nope' }).expect(404);
    expect(unknown.body.message).toContain('No lock store named "nope"');
    await Promise.all([critical.release(), plain.release()]);
    await app.close();
  });
});

describe.each(PLATFORMS)('DistributedLockAdminModule readOnly on %s', (platform) => {
  it('registers no release endpoint at all (404, even with guards) and tells the page there is no release', async () => {
    const app = await startApp({ readOnly: true, guards: [{ canActivate: () => true }] }, platform);
    const lock = await app.get(LockService).acquire('k');
    await request(baseUrl(app)).post('/locks/api/release').send({ key: 'k', reason: 'r' }).expect(404);
    expect(lock.signal.aborted).toBe(false);
    await request(baseUrl(app)).get('/locks/api/inspect').query({ key: 'k' }).expect(200);
    const page = await request(baseUrl(app)).get('/locks').expect(200);
    expect(page.text).toContain('"release":"none"');
    await lock.release();
    await app.close();
  });
});

describe.each(PLATFORMS)('DistributedLockAdminModule under a global prefix on %s', (platform) => {
  it('serves the page and its endpoints under the prefix; the page builds its URLs from where it is served', async () => {
    const app = await startHttpApp(
      platform,
      {
        imports: [
          DistributedLockModule.forRoot({ backend: { type: 'memory' } }),
          DistributedLockAdminModule.register({ path: '/ops/locks', guards: [{ canActivate: () => true }] }),
        ],
      },
      (created) => created.setGlobalPrefix('api'),
    );
    const page = await request(baseUrl(app)).get('/api/ops/locks').expect(200);
    expect(page.text).toContain('location.pathname.replace(');
    expect(page.text).not.toContain('/ops/locks');
    await request(baseUrl(app)).get('/api/ops/locks/api/locks').expect(200);
    await app.close();
  });
});
