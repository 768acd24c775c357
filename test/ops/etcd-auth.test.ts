import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  createLockBackend,
  InvalidLockArgumentError,
  LockBackendError,
  type EtcdBackendOptions,
} from '../../lib/index.js';
import { EtcdServer } from '../harness/etcd-server.js';
import { requireBinary } from '../harness/server-process.js';
import { expectHandOff, expectLoginRefused, useClosedEngines } from './login-checks.js';

const ROOT_PASSWORD = 'root-secret-pw';
const APP_PASSWORD = 'app-secret-pw';
/** The engines' key prefix; the `app` user may read and write only keys under it. */
const PREFIX = 'authz:';

let etcd: EtcdServer;

function etcdctl(...args: string[]): string {
  return execFileSync(requireBinary('/usr/bin/etcdctl', 'etcd-client'), ['--endpoints', etcd.url, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ETCDCTL_API: '3' },
  });
}

const options = (auth?: EtcdBackendOptions['auth']): EtcdBackendOptions => ({
  type: 'etcd',
  urls: etcd.url,
  leaseTtlMs: 5_000,
  requestTimeoutMs: 2_000,
  ...(auth && { auth }),
});

const engineFor = useClosedEngines({ keyPrefix: PREFIX, leaseMs: 30_000, waitMs: 5_000 });

/** Lock, hand-over to a waiter (a watch, over the same credentials), release, and a health ping. */
async function expectWorking(backendOptions: EtcdBackendOptions): Promise<void> {
  const { held, next } = await expectHandOff((wrap) => engineFor(backendOptions, wrap));
  expect(next.fence).toBeGreaterThan(held.fence!);
}

/**
 * A refused login is LockBackendError (not busy), quickly, and the password is in no message.
 * `ping()` (etcd's status call) fails too when the login is refused; without any credentials it
 * still succeeds: etcd answers status without auth.
 */
async function expectRefused(backendOptions: EtcdBackendOptions, message: RegExp): Promise<void> {
  const engine = await engineFor(backendOptions);
  await expectLoginRefused(engine, {
    message,
    withinMs: 2_000,
    secret: backendOptions.auth?.password ?? ROOT_PASSWORD,
  });
  if (backendOptions.auth) await expect(engine.backend.ping!()).rejects.toBeInstanceOf(Error);
  else await expect(engine.backend.ping!()).resolves.toBeUndefined();
}

beforeAll(async () => {
  etcd = await EtcdServer.start();
  etcdctl('user', 'add', `root:${ROOT_PASSWORD}`, '--interactive=false');
  etcdctl('user', 'grant-role', 'root', 'root');
  etcdctl('role', 'add', 'locks');
  etcdctl('role', 'grant-permission', 'locks', 'readwrite', PREFIX, '--prefix=true');
  etcdctl('user', 'add', `app:${APP_PASSWORD}`, '--interactive=false');
  etcdctl('user', 'grant-role', 'app', 'locks');
  etcdctl('auth', 'enable');
}, 30_000);
afterAll(() => etcd?.destroy());

describe('etcd backend with auth enabled', () => {
  it('works as root with the right password', () =>
    expectWorking(options({ username: 'root', password: ROOT_PASSWORD })));
  it('works as a user whose role may only read and write the lock prefix', () =>
    expectWorking(options({ username: 'app', password: APP_PASSWORD })));
  it('a wrong password is LockBackendError, quickly', () =>
    expectRefused(options({ username: 'root', password: 'wrong-pw' }), /authentication failed/));
  it('an unknown user is LockBackendError', () =>
    expectRefused(options({ username: 'nobody', password: 'pw' }), /authentication failed/));
  it('no credentials is LockBackendError', () => expectRefused(options(), /user name is empty|permission denied/));

  it('a user without permission on the prefix is LockBackendError (permission denied)', async () => {
    const engine = await engineFor(options({ username: 'app', password: APP_PASSWORD }), undefined, {
      keyPrefix: 'elsewhere:',
      waitMs: 0,
    });
    await expect(engine.acquire('k')).rejects.toThrow(LockBackendError);
    await expect(engine.acquire('k')).rejects.toThrow(/permission denied/);
  });
});

describe('etcd auth and TLS options', () => {
  const bad: [string, Partial<EtcdBackendOptions>][] = [
    ['auth not an object', { auth: 'root:pw' as never }],
    ['auth without username', { auth: { password: 'hunter2-secret' } as never }],
    ['auth with an empty username', { auth: { username: '', password: 'hunter2-secret' } }],
    ['auth with a password that is not a string', { auth: { username: 'root', password: 12345 as never } }],
    ['credentials with http:// hosts', { credentials: { rootCertificate: '-----BEGIN CERTIFICATE-----' } }],
    ['credentials empty', { urls: 'https://127.0.0.1:2379', credentials: {} }],
    [
      'a client key without its certificate chain',
      { urls: 'https://127.0.0.1:2379', credentials: { privateKey: 'hunter2-key' } },
    ],
    [
      'an empty root certificate',
      { urls: 'https://127.0.0.1:2379', credentials: { rootCertificate: Buffer.alloc(0) } },
    ],
  ];
  it.each(bad)('%s → InvalidLockArgumentError that quotes no secret', async (_name, extra) => {
    const error = await createLockBackend({
      type: 'etcd',
      urls: 'http://127.0.0.1:2379',
      ...extra,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).not.toMatch(/hunter2/);
  });

  it('text that is not PEM is InvalidLockArgumentError when the backend is created (at bootstrap)', async () => {
    const error = await createLockBackend({
      type: 'etcd',
      urls: 'https://127.0.0.1:2379',
      credentials: { rootCertificate: 'not a certificate', privateKey: Buffer.from('hunter2-key'), certChain: 'chain' },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toMatch(/PEM/);
    expect((error as Error).message).not.toMatch(/hunter2/);
  });
});
