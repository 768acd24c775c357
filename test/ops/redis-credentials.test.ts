import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { LockBackendError, type BackendOptions } from '../../lib/index.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { BusySpy } from '../support/observed-backend.js';
import { expectHandOff, expectLoginRefused, useClosedEngines } from './login-checks.js';

// Password-protected servers: the default user's password (requirepass) and an ACL user.
const PASSWORD = 'def-secret';
const USER = 'app';
const USER_PASSWORD = 'app-secret';

let masters: RedisMasters;

/** Sets the passwords on a running server, through a client of the test's own. */
async function protect(url: string): Promise<void> {
  const admin = new Redis(url);
  // `&*`: Redis 7 gives new ACL users no pub/sub channels; the release message needs them.
  await admin.call('ACL', 'SETUSER', USER, 'on', `>${USER_PASSWORD}`, '~*', '&*', '+@all');
  await admin.call('ACL', 'SETUSER', 'nochannels', 'on', '>pw', '~*', '+@all');
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
}

function withCredentials(url: string, credentials: string): string {
  return url.replace('redis://', `redis://${credentials}@`);
}

const engineFor = useClosedEngines({ keyPrefix: 'creds:', leaseMs: 30_000, waitMs: 5_000 });

/** Takes and releases a lock, and hands it over to a waiter (pub/sub on the subscriber connection, which must log in too). */
async function expectWorking(options: BackendOptions): Promise<void> {
  await expectHandOff((wrap) => engineFor(options, wrap));
}

/** A refused login is a store error (LockBackendError), reported within a couple of seconds, never a busy lock. */
async function expectRefused(options: BackendOptions, message: RegExp): Promise<void> {
  const engine = await engineFor(options);
  await expectLoginRefused(engine, { message, withinMs: 3_000 });
  await expect(engine.backend.ping!()).rejects.toBeInstanceOf(LockBackendError);
}

beforeAll(async () => {
  masters = await RedisMasters.start(3);
  await Promise.all(masters.urls.map(protect));
}, 30_000);
afterAll(() => masters?.stop());

describe('redis backend with credentials', () => {
  const url = () => masters.urls[0];

  it('logs in with the password in the URL (requirepass)', () =>
    expectWorking({ type: 'redis', url: withCredentials(url(), `:${PASSWORD}`) }));
  it('logs in as an ACL user (redis://user:password@host)', () =>
    expectWorking({ type: 'redis', url: withCredentials(url(), `${USER}:${USER_PASSWORD}`) }));

  it('an ACL user without pub/sub channels (Redis 7 default: no `&*`) fails with LockBackendError naming publish at a release somebody waits for', async () => {
    const spy = new BusySpy();
    const options: BackendOptions = { type: 'redis', url: withCredentials(url(), 'nochannels:pw') };
    const [holder, waiter] = [await engineFor(options), await engineFor(options, (backend) => spy.wrap(backend))];
    const key = `k:${Math.random()}`;
    const lonely = await holder.acquire(`${key}:alone`);
    // Nobody waits: the release publishes nothing, so nothing fails yet.
    await expect(lonely.release()).resolves.toBeUndefined();
    const lock = await holder.acquire(key);
    const waiting = waiter.acquire(key, { waitMs: 1_000 }).catch((caught: unknown) => caught);
    await spy.whenBusy(1);
    const error = await lock.release().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockBackendError);
    expect((error as Error).message).toMatch(/can't publish to the channel/);
    await waiting;
  });
  it('uses a client of yours with its own credentials as it is', async () => {
    const client = new Redis(url(), { username: USER, password: USER_PASSWORD });
    await expectWorking({ type: 'redis', client });
    await client.quit();
  });

  it('a wrong password is LockBackendError, quickly', () =>
    expectRefused({ type: 'redis', url: withCredentials(url(), ':wrong') }, /WRONGPASS|invalid username-password/));
  it('no password is LockBackendError (NOAUTH)', () =>
    expectRefused({ type: 'redis', url: url() }, /NOAUTH|Authentication required/));
  it('an unknown ACL user is LockBackendError', () =>
    expectRefused({ type: 'redis', url: withCredentials(url(), 'nobody:pw') }, /WRONGPASS|invalid username-password/));
});

describe('redlock backend with credentials', () => {
  const urls = (credentials: string) => masters.urls.map((url) => withCredentials(url, credentials));

  it('logs in on every master with the passwords in the URLs', () =>
    expectWorking({ type: 'redlock', urls: urls(`:${PASSWORD}`) }));
  it('logs in as an ACL user on every master', () =>
    expectWorking({ type: 'redlock', urls: urls(`${USER}:${USER_PASSWORD}`) }));
  it('a wrong password on every master is LockBackendError (no quorum), quickly', () =>
    expectRefused({ type: 'redlock', urls: urls(':wrong') }, /quorum/));
});
