import { Injectable, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockLostError,
  type DistributedLockModuleOptions,
  type LockService,
} from '../../lib/index.js';

/** One bad input: what to call, and the typed error it must produce. */
export interface BadInputCase {
  readonly entry: 'module options' | 'decorator arguments' | 'templates' | 'LockService calls' | 'Lock methods';
  readonly name: string;
  readonly run: (ctx: CaseContext) => unknown;
  readonly error: abstract new (...args: never[]) => Error;
  readonly message: RegExp;
}

export interface CaseContext {
  readonly locks: LockService;
  readonly jobs: TemplatedJobs;
}

/** Locked methods whose key templates name arguments that a bad call leaves out. */
@Injectable()
export class TemplatedJobs {
  @Locked('order:{0.id}')
  async byOrderId(order?: unknown): Promise<string> {
    return `ran ${String(order)}`;
  }

  @Locked({ key: 'sku:{1}', waitMs: 0 })
  async bySecondArg(_first: unknown, _second?: unknown): Promise<string> {
    return 'ran';
  }

  @Locked((tenant: unknown) => tenant as string)
  async byFunction(_tenant: unknown): Promise<string> {
    return 'ran';
  }

  @Locked({ key: ['k', 'sku:{1}'], waitMs: 0 })
  async byKeyList(_first: unknown, _second?: unknown): Promise<string> {
    return 'ran';
  }
}

/** A provider whose locked method names a request part, which a provider method never has: its application fails at bootstrap. */
@Injectable()
class RequestTemplatedJobs {
  @Locked('route:{params.sku}')
  async byRequestPart(): Promise<string> {
    return 'ran';
  }
}

/** Initialises an application of `providers` on the memory store, and closes it. */
async function initWith(providers: Provider[]): Promise<void> {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
    providers,
  }).compile();
  try {
    await moduleRef.init();
  } finally {
    await moduleRef.close();
  }
}

const bootstrap = (options: unknown) =>
  Test.createTestingModule({
    imports: [DistributedLockModule.forRoot(options as DistributedLockModuleOptions)],
  }).compile();

const bootstrapAsync = (options: unknown) =>
  Test.createTestingModule({
    imports: [DistributedLockModule.forRootAsync({ useFactory: async () => options as DistributedLockModuleOptions })],
  }).compile();

/** Applies @Locked(...args) to a fresh method, as TypeScript does when the class is defined. */
function decorate(...args: unknown[]): void {
  class Target {
    method(): void {}
    get getter(): number {
      return 1;
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Target.prototype, 'method')!;
  (Locked as (...a: unknown[]) => MethodDecorator)(...args)(Target.prototype, 'method', descriptor);
}

function decorateGetter(): void {
  class Target {
    get getter(): number {
      return 1;
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Target.prototype, 'getter')!;
  Locked('k')(Target.prototype, 'getter', descriptor);
}

const I = InvalidLockArgumentError;
const c = (
  entry: BadInputCase['entry'],
  name: string,
  run: BadInputCase['run'],
  message: RegExp,
  error: BadInputCase['error'] = I,
): BadInputCase => ({ entry, name, run, error, message });

const M = 'module options' as const;
const D = 'decorator arguments' as const;
const T = 'templates' as const;
const S = 'LockService calls' as const;
const L = 'Lock methods' as const;

export const BAD_INPUT_CASES: readonly BadInputCase[] = [
  c(
    M,
    'options missing (undefined)',
    () => bootstrap(undefined),
    /options must be an object with a "backend"|backend must be an object/,
  ),
  c(M, 'options not an object', () => bootstrap('redis://localhost'), /must be an object/),
  c(M, 'backend missing', () => bootstrap({}), /backend must be an object/),
  c(M, 'backend given as a string', () => bootstrap({ backend: 'redis' }), /backend must be an object/),
  c(M, 'unknown backend type', () => bootstrap({ backend: { type: 'mongodb' } }), /Unknown backend type "mongodb"/),
  c(
    M,
    'store name empty',
    async () => DistributedLockModule.forRoot({ name: '', backend: { type: 'memory' } }),
    /name must be a non-empty string/,
  ),
  c(
    M,
    'forRootAsync store name not a string',
    async () =>
      DistributedLockModule.forRootAsync({ name: 5 as never, useFactory: () => ({ backend: { type: 'memory' } }) }),
    /name must be a non-empty string/,
  ),
  c(
    M,
    'forRootAsync factory renaming the store',
    () => bootstrapAsync({ name: 'other', backend: { type: 'memory' } }),
    /returned name "other" for the store registered as "default"/,
  ),
  c(
    M,
    'forRootAsync with no options source',
    async () => DistributedLockModule.forRootAsync({}),
    /needs one of useFactory, useClass or useExisting/,
  ),
  c(
    M,
    'instance label empty',
    () => bootstrap({ backend: { type: 'memory' }, instance: '' }),
    /instance must be a non-empty string/,
  ),
  c(
    M,
    'keyPrefix a number',
    () => bootstrap({ backend: { type: 'memory' }, keyPrefix: 5 }),
    /keyPrefix must be a string/,
  ),
  c(M, 'leaseMs 0', () => bootstrap({ backend: { type: 'memory' }, leaseMs: 0 }), /leaseMs must be a finite number/),
  c(
    M,
    'leaseMs NaN',
    () => bootstrap({ backend: { type: 'memory' }, leaseMs: NaN }),
    /leaseMs must be a finite number/,
  ),
  c(
    M,
    'leaseMs beyond a timer',
    () => bootstrap({ backend: { type: 'memory' }, leaseMs: 2 ** 40 }),
    /leaseMs must be at most/,
  ),
  c(
    M,
    'waitMs negative',
    () => bootstrap({ backend: { type: 'memory' }, waitMs: -1 }),
    /waitMs must be a number of milliseconds >= 0/,
  ),
  c(
    M,
    'forRootAsync factory giving a bad leaseMs',
    () => bootstrapAsync({ backend: { type: 'memory' }, leaseMs: '30s' }),
    /leaseMs must be a finite number/,
  ),
  c(
    M,
    'redis: neither url nor client',
    () => bootstrap({ backend: { type: 'redis' } }),
    /exactly one of `url` or `client`/,
  ),
  c(M, 'redis: url not a string', () => bootstrap({ backend: { type: 'redis', url: 6379 } }), /`url` must be a string/),
  c(
    M,
    'redis: client not an ioredis client',
    () => bootstrap({ backend: { type: 'redis', client: {} } }),
    /must be an ioredis Redis or Cluster client/,
  ),
  c(
    M,
    'redlock: empty urls',
    () => bootstrap({ backend: { type: 'redlock', urls: [] } }),
    /`urls` must be a non-empty array/,
  ),
  c(
    M,
    'redlock: quorum not a majority',
    () =>
      bootstrap({
        backend: {
          type: 'redlock',
          urls: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'],
          quorum: 1,
        },
      }),
    /`quorum` must be an integer above half/,
  ),
  c(
    M,
    'redis: driftFactor of 1',
    () => bootstrap({ backend: { type: 'redis', url: 'redis://127.0.0.1:1', driftFactor: 1 } }),
    /redis backend: `driftFactor` must be a number in \[0, 1\)/,
  ),
  c(
    M,
    'postgres: negative driftFactor',
    () =>
      bootstrap({ backend: { type: 'postgres', connectionString: 'postgres://x@127.0.0.1:1/x', driftFactor: -0.5 } }),
    /postgres backend: `driftFactor` must be a number in \[0, 1\)/,
  ),
  c(
    M,
    'redlock: negative driftFactor',
    () => bootstrap({ backend: { type: 'redlock', urls: ['redis://127.0.0.1:1'], driftFactor: -1 } }),
    /`driftFactor` must be a number in \[0, 1\)/,
  ),
  c(M, 'zookeeper: no url', () => bootstrap({ backend: { type: 'zookeeper' } }), /url must look like/),
  c(
    M,
    'zookeeper: relative rootPath',
    () => bootstrap({ backend: { type: 'zookeeper', url: '127.0.0.1:1', rootPath: '../locks' } }),
    /rootPath must be an absolute znode path/,
  ),
  c(
    M,
    'zookeeper: negative sessionTimeoutMs',
    () => bootstrap({ backend: { type: 'zookeeper', url: '127.0.0.1:1', sessionTimeoutMs: -5 } }),
    /sessionTimeoutMs must be a whole number/,
  ),
  c(
    M,
    "zookeeper: acl 'creator' without auth",
    () => bootstrap({ backend: { type: 'zookeeper', url: '127.0.0.1:1', acl: 'creator' } }),
    /acl 'creator' grants the session's authenticated ids, so it needs the auth option/,
  ),
  c(
    M,
    'zookeeper: unknown acl permission',
    () =>
      bootstrap({
        backend: {
          type: 'zookeeper',
          url: '127.0.0.1:1',
          acl: [{ scheme: 'world', id: 'anyone', permissions: ['read', 'execute'] }],
        },
      }),
    /acl\[0\]\.permissions: unknown permission "execute"/,
  ),
  c(
    M,
    'zookeeper: auth with an empty scheme',
    () =>
      bootstrap({
        backend: { type: 'zookeeper', url: '127.0.0.1:1', auth: [{ scheme: '', credentials: 'app:secret' }] },
      }),
    /auth\[0\]\.scheme must be a non-empty scheme name/,
  ),
  c(
    M,
    'etcd: empty urls',
    () => bootstrap({ backend: { type: 'etcd', urls: [] } }),
    /urls must be a URL or a non-empty array/,
  ),
  c(
    M,
    'etcd: leaseTtlMs 0',
    () => bootstrap({ backend: { type: 'etcd', urls: 'http://127.0.0.1:1', leaseTtlMs: 0 } }),
    /leaseTtlMs must be a whole number/,
  ),
  c(M, 'postgres: no connection', () => bootstrap({ backend: { type: 'postgres' } }), /needs url .* or client/),
  c(
    M,
    'postgres: SQL in the table name',
    () =>
      bootstrap({
        backend: { type: 'postgres', url: 'postgres://x@127.0.0.1:1/x', table: 'locks"; DROP TABLE users; --' },
      }),
    /table must be an identifier/,
  ),
  c(
    M,
    'mysql: backtick in the table name',
    () => bootstrap({ backend: { type: 'mysql', url: 'mysql://x@127.0.0.1:1/x', table: 'a`b' } }),
    /table must be an identifier/,
  ),
  c(
    M,
    'module option misspelt (leaseMS)',
    () => bootstrap({ backend: { type: 'memory' }, leaseMS: 100 }),
    /DistributedLockModule: unknown option "leaseMS" \(accepted: name, backend, instance, keyPrefix, leaseMs, waitMs, maxWaitMs, mapErrors, isGlobal, gracefulShutdownTimeoutMs, stopAcceptingOnShutdown\)/,
  ),
  c(
    M,
    'maxWaitMs negative',
    () => bootstrap({ backend: { type: 'memory' }, maxWaitMs: -1 }),
    /maxWaitMs must be a number of milliseconds >= 0/,
  ),
  c(
    M,
    'mapErrors not a boolean',
    () => bootstrap({ backend: { type: 'memory' }, mapErrors: 'off' }),
    /DistributedLockModule: mapErrors must be a boolean, got "off"/,
  ),
  c(
    M,
    'stopAcceptingOnShutdown not a boolean',
    () => bootstrap({ backend: { type: 'memory' }, stopAcceptingOnShutdown: 1 }),
    /DistributedLockModule: stopAcceptingOnShutdown must be a boolean, got 1/,
  ),
  c(
    M,
    'forRootAsync factory returning an unknown option',
    () => bootstrapAsync({ backend: { type: 'memory' }, ttl: 5 }),
    /DistributedLockModule: unknown option "ttl"/,
  ),
  c(
    M,
    'forRootAsync argument with an unknown option',
    async () =>
      DistributedLockModule.forRootAsync({
        useFactory: () => ({ backend: { type: 'memory' } }),
        global: true,
      } as never),
    /forRootAsync\(\): unknown option "global" \(accepted: name, isGlobal, mapErrors, imports, useFactory, inject, useClass, useExisting\)/,
  ),
  c(
    M,
    'memory: unknown option',
    () => bootstrap({ backend: { type: 'memory', url: 'redis://127.0.0.1:1' } }),
    /memory backend: unknown option "url" \(accepted: type\)/,
  ),
  c(
    M,
    'redis: unknown option (replica misspelt)',
    () => bootstrap({ backend: { type: 'redis', url: 'redis://127.0.0.1:1', replica: { min: 1, timeoutMs: 100 } } }),
    /redis backend: unknown option "replica" \(accepted: type, url, client, idleKeyTtlMs, replicas, driftFactor\)/,
  ),
  c(
    M,
    'redis: replicas.min 0',
    () => bootstrap({ backend: { type: 'redis', url: 'redis://127.0.0.1:1', replicas: { min: 0, timeoutMs: 100 } } }),
    /`replicas.min` must be a whole number of replicas from 1, got 0/,
  ),
  c(
    M,
    'redis: replicas without timeoutMs',
    () => bootstrap({ backend: { type: 'redis', url: 'redis://127.0.0.1:1', replicas: { min: 1 } } }),
    /`replicas.timeoutMs` must be a whole number of ms from 1 to 60000, got undefined/,
  ),
  c(
    M,
    'redis: replicas with an unknown field',
    () =>
      bootstrap({
        backend: { type: 'redis', url: 'redis://127.0.0.1:1', replicas: { min: 1, timeoutMs: 100, fsync: true } },
      }),
    /`replicas`: unknown option "fsync" \(accepted: min, timeoutMs, aof\)/,
  ),
  c(
    M,
    'redlock: unknown option',
    () => bootstrap({ backend: { type: 'redlock', urls: ['redis://127.0.0.1:1'], retryCount: 3 } }),
    /redlock backend: unknown option "retryCount" \(accepted: type, urls, clients, quorum, driftFactor, nodeTimeoutMs, retryJitterMs\)/,
  ),
  c(
    M,
    'zookeeper: unknown option',
    () => bootstrap({ backend: { type: 'zookeeper', url: '127.0.0.1:1', sessionTimeout: 5000 } }),
    /zookeeper backend: unknown option "sessionTimeout" \(accepted: type, url, sessionTimeoutMs, connectTimeoutMs, rootPath, auth, acl\)/,
  ),
  c(
    M,
    'etcd: unknown option (leaseTtlSecond)',
    () => bootstrap({ backend: { type: 'etcd', urls: 'http://127.0.0.1:1', leaseTtlSecond: 5 } }),
    /etcd backend: unknown option "leaseTtlSecond" \(accepted: type, urls, leaseTtlMs, requestTimeoutMs, auth, credentials\)/,
  ),
  c(
    M,
    'postgres: unknown option',
    () => bootstrap({ backend: { type: 'postgres', url: 'postgres://x@127.0.0.1:1/x', schema: 'locks' } }),
    /postgres backend: unknown option "schema" \(accepted: type, url, client, table, idleKeyTtlMs, driftFactor\)/,
  ),
  c(
    M,
    'mysql: unknown option',
    () =>
      bootstrap({ backend: { type: 'mysql', url: 'mysql://x@127.0.0.1:1/x', replicas: { min: 1, timeoutMs: 100 } } }),
    /mysql backend: unknown option "replicas" \(accepted: type, url, client, table, idleKeyTtlMs, driftFactor\)/,
  ),

  c(D, 'key undefined', () => decorate(undefined), /key must be a non-empty string template or a function/),
  c(D, 'key empty', () => decorate(''), /key must be a non-empty string template or a function/),
  c(D, 'key a number', () => decorate(42), /key must be a non-empty string template or a function/),
  c(D, 'leaseMs 0', () => decorate('k', 0), /leaseMs must be a finite number/),
  c(D, 'waitMs negative', () => decorate('k', 1000, -5), /waitMs must be a number of milliseconds >= 0/),
  c(D, "onBusy 'maybe'", () => decorate({ key: 'k', onBusy: 'maybe' }), /onBusy must be 'throw' or 'skip'/),
  c(D, "mode 'shared'", () => decorate({ key: 'k', mode: 'shared' }), /mode must be one of/),
  c(D, 'unknown option (typo)', () => decorate({ key: 'k', leaseMS: 100 }), /unknown option "leaseMS"/),
  c(
    D,
    'options object followed by more arguments',
    () => decorate({ key: 'k' }, 1000),
    /takes \(key\?, leaseMs\?, waitMs\?\)/,
  ),
  c(
    D,
    'minHoldMs above maxHoldMs',
    () => decorate({ key: 'k', minHoldMs: 2_000, maxHoldMs: 1_000 }),
    /minHoldMs \(2000\) must not exceed maxHoldMs \(1000\)/,
  ),
  c(
    D,
    'minHoldMs 0',
    () => decorate({ key: 'k', minHoldMs: 0 }),
    /minHoldMs must be a finite number of milliseconds > 0/,
  ),
  c(D, 'applied to a getter', () => decorateGetter(), /can only decorate methods/),
  c(D, 'template with an unclosed brace', () => decorate('order:{0.id'), /bad key template/),
  c(D, 'template with an empty placeholder', () => decorate('order:{}'), /bad key template/),
  c(D, 'key list empty', () => decorate({ key: [] }), /key list must not be empty/),
  c(D, 'key list empty (positional)', () => decorate([], 1000), /key list must not be empty/),
  c(
    D,
    'key list with a number element',
    () => decorate({ key: ['a:{0}', 5] }),
    /key list element 1 must be a non-empty string template or a function, got 5/,
  ),
  c(D, 'key list with a bad template', () => decorate({ key: ['a:{0}', 'b:{0'] }), /bad key template "b:\{0"/),
  c(
    D,
    'permits with a key list',
    () => decorate({ key: ['a', 'b'], permits: 2 }),
    /permits \(a semaphore\) cannot be combined with a key list/,
  ),
  c(D, 'store an empty string', () => decorate({ key: 'k', store: '' }), /store must be a non-empty string/),
  c(D, 'store a number', () => decorate({ key: 'k', store: 3 }), /store must be a non-empty string/),

  c(
    T,
    'argument named by the template is missing',
    ({ jobs }) => jobs.byOrderId(),
    /names \{0\.id\}, which is missing/,
  ),
  c(T, 'argument is null', ({ jobs }) => jobs.byOrderId(null), /names \{0\.id\}, which is missing|null/),
  c(
    T,
    'argument is an object where a scalar is needed',
    ({ jobs }) => jobs.bySecondArg('a', { nested: true }),
    /only strings, numbers, bigints and booleans/,
  ),
  c(
    T,
    'key function returns undefined',
    ({ jobs }) => jobs.byFunction(undefined),
    /key function must return a non-empty string/,
  ),
  c(T, 'key function returns a too long key', ({ jobs }) => jobs.byFunction('x'.repeat(70_000)), /at most 65536/),
  c(
    T,
    'request part on a provider method (not a handler): the bootstrap fails',
    () => initWith([RequestTemplatedJobs]),
    /is not a handler Nest calls/,
  ),
  c(
    T,
    'key list naming a missing argument (its first key untouched)',
    ({ jobs }) => jobs.byKeyList('a'),
    /names \{1\}, which is missing/,
  ),

  c(S, 'acquire: empty key', ({ locks }) => locks.acquire(''), /must not be empty/),
  c(S, 'acquire: key a number', ({ locks }) => locks.acquire(42 as never), /must be a string, got 42/),
  c(S, 'acquire: key null', ({ locks }) => locks.acquire(null as never), /must be a string, got null/),
  c(S, 'acquire: key over 64 KiB', ({ locks }) => locks.acquire('k'.repeat(65_537)), /at most 65536/),
  c(
    S,
    'acquire: leaseMs negative',
    ({ locks }) => locks.acquire('k', { leaseMs: -1 }),
    /leaseMs must be a finite number/,
  ),
  c(
    S,
    'acquire: leaseMs a string',
    ({ locks }) => locks.acquire('k', { leaseMs: '5000' as never }),
    /leaseMs must be a finite number/,
  ),
  c(S, 'acquire: waitMs NaN', ({ locks }) => locks.acquire('k', { waitMs: NaN }), /waitMs must be a number/),
  c(
    S,
    "acquire: mode 'upgrade'",
    ({ locks }) => locks.acquire('k', { mode: 'upgrade' as never }),
    /mode must be one of/,
  ),
  c(S, 'acquire: options a string', ({ locks }) => locks.acquire('k', 'fast' as never), /options must be an object/),
  c(
    S,
    'acquire: signal not an AbortSignal',
    ({ locks }) => locks.acquire('k', { signal: {} as never }),
    /signal must be an AbortSignal/,
  ),
  c(S, 'tryAcquire: empty key', ({ locks }) => locks.tryAcquire(''), /must not be empty/),
  c(
    S,
    'acquire: minHoldMs NaN',
    ({ locks }) => locks.acquire('k', { minHoldMs: NaN }),
    /minHoldMs must be a finite number/,
  ),
  c(
    S,
    'acquire: maxHoldMs negative',
    ({ locks }) => locks.acquire('k', { maxHoldMs: -1 }),
    /maxHoldMs must be a finite number/,
  ),
  c(
    S,
    'acquire: minHoldMs above maxHoldMs',
    ({ locks }) => locks.acquire('k', { minHoldMs: 5_000, maxHoldMs: 10 }),
    /must not exceed maxHoldMs/,
  ),
  c(
    S,
    'acquire: minHoldMs on a read lock',
    ({ locks }) => locks.acquire('k', { minHoldMs: 100, mode: 'read' }),
    /minHoldMs applies to exclusive locks/,
  ),
  c(
    S,
    'semaphore: minHoldMs',
    ({ locks }) => locks.semaphore('k', 2, { minHoldMs: 100 }),
    /minHoldMs applies to exclusive locks/,
  ),
  c(
    S,
    'tryAcquire: leaseMs Infinity',
    ({ locks }) => locks.tryAcquire('k', { leaseMs: Infinity }),
    /leaseMs must be a finite number/,
  ),
  c(S, 'withLock: no function', ({ locks }) => locks.withLock('k', undefined as never), /needs a function/),
  c(S, 'withLock: key undefined', ({ locks }) => locks.withLock(undefined as never, () => 1), /must be a string/),
  c(
    S,
    'withLock: read lock upgraded to write in the same call chain',
    ({ locks }) => locks.withLock('rw', () => locks.acquire('rw', { mode: 'write' }), { mode: 'read' }),
    /cannot be upgraded/,
  ),
  c(S, 'acquire: empty key list', ({ locks }) => locks.acquire([]), /Lock key list must not be empty/),
  c(
    S,
    'acquire: key list with a number',
    ({ locks }) => locks.acquire(['k', 7] as never),
    /element 1: Lock key must be a string, got 7/,
  ),
  c(
    S,
    'tryAcquire: key list with an empty key',
    ({ locks }) => locks.tryAcquire(['k', '']),
    /element 1: Lock key must not be empty/,
  ),
  c(
    S,
    'withLock: key list with a key over 64 KiB',
    ({ locks }) => locks.withLock(['k', 'k'.repeat(65_537)], () => 1),
    /element 1: .*at most 65536/,
  ),
  c(
    S,
    'withLock: key list with permits',
    ({ locks }) => locks.withLock(['k', 'held'], () => 1, { permits: 2 }),
    /cannot span several keys/,
  ),
  c(
    S,
    'acquire: key list upgrading a read-held key (the key before it given back)',
    ({ locks }) => locks.withLock('rw', () => locks.acquire(['rw', 'k'], { mode: 'write' }), { mode: 'read' }),
    /cannot be upgraded/,
  ),

  c(
    L,
    'extend: leaseMs 0',
    ({ locks }) => withHeld(locks, (lock) => lock.extend(0)),
    /leaseMs must be a finite number/,
  ),
  c(
    L,
    'extend: leaseMs a string',
    ({ locks }) => withHeld(locks, (lock) => lock.extend('1m' as never)),
    /leaseMs must be a finite number/,
  ),
  c(
    L,
    'extend after release',
    async ({ locks }) => {
      const lock = await locks.acquire('released');
      await lock.release();
      return lock.extend();
    },
    /already released/,
    LockLostError,
  ),
  c(
    L,
    'extend of a key-list lock: leaseMs 0',
    async ({ locks }) => {
      const lock = await locks.acquire(['k', 'held']);
      try {
        return await lock.extend(0);
      } finally {
        await lock.release();
      }
    },
    /leaseMs must be a finite number/,
  ),
  c(
    L,
    'release of a key-list lock after its leases lapsed',
    async ({ locks }) => {
      const lock = await locks.acquire(['k', 'lapsed'], { leaseMs: 30 });
      const until = performance.now() + 80;
      while (performance.now() < until);
      return lock.release();
    },
    /was lost/,
    LockLostError,
  ),
  c(
    L,
    'release after the lease lapsed (event loop blocked)',
    async ({ locks }) => {
      const lock = await locks.acquire('lapsed', { leaseMs: 30 });
      const until = performance.now() + 80;
      while (performance.now() < until);
      return lock.release();
    },
    /was lost/,
    LockLostError,
  ),
];

/** Runs `fn` with a held lock, releasing it after whatever `fn` did. */
async function withHeld(
  locks: LockService,
  fn: (lock: Awaited<ReturnType<LockService['acquire']>>) => Promise<unknown>,
): Promise<unknown> {
  const lock = await locks.acquire('held');
  try {
    return await fn(lock);
  } finally {
    await lock.release();
  }
}
