import { afterEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  LockEngine,
  LockService,
  type DistributedLockModuleOptions,
  type DistributedLockOptionsFactory,
} from '../../lib/index.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_LEASE_MS, DEFAULT_WAIT_MS } from '../../lib/engine/lock-engine.js';
import { LOCK_ENGINE } from '../../lib/nest/lock-constants.js';
import { RecordingBackend } from './nest-test-kit.js';

const CONFIG = 'TEST_CONFIG';

@Module({ providers: [{ provide: CONFIG, useValue: { prefix: 'cfg:' } }], exports: [CONFIG] })
class ConfigModule {}

@Injectable()
class UsesLocks {
  constructor(readonly locks: LockService) {}
}

@Module({ providers: [UsesLocks] })
class FeatureModule {}

describe('DistributedLockModule', () => {
  const opened: INestApplicationContext[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
  });

  async function start(imports: unknown[], providers: unknown[] = []) {
    const moduleRef = await Test.createTestingModule({
      imports: imports as never[],
      providers: providers as never[],
    }).compile();
    opened.push(moduleRef);
    return moduleRef.init();
  }

  it('forRoot provides LockService with the engine defaults', async () => {
    const app = await start([DistributedLockModule.forRoot({ backend: { type: 'memory' } })]);
    const engine = app.get<LockEngine>(LOCK_ENGINE);
    expect([engine.keyPrefix, engine.leaseMs, engine.waitMs]).toEqual([
      DEFAULT_KEY_PREFIX,
      DEFAULT_LEASE_MS,
      DEFAULT_WAIT_MS,
    ]);
    const locks = app.get(LockService);
    await expect(locks.withLock('k', (lock) => lock.key)).resolves.toBe('k');
  });

  it('forRoot passes keyPrefix, leaseMs and waitMs to the engine', async () => {
    const backend = new RecordingBackend();
    const app = await start([DistributedLockModule.forRoot({ backend, keyPrefix: 'app:', leaseMs: 5000, waitMs: 0 })]);
    const engine = app.get<LockEngine>(LOCK_ENGINE);
    expect([engine.leaseMs, engine.waitMs]).toEqual([5000, 0]);
    await app.get(LockService).withLock('k', () => undefined);
    expect(backend.keys).toEqual(['app:k']);
  });

  it('forRootAsync with useFactory and inject', async () => {
    const backend = new RecordingBackend();
    const app = await start([
      DistributedLockModule.forRootAsync({
        imports: [ConfigModule],
        inject: [CONFIG],
        useFactory: (config: { prefix: string }) => ({ backend, keyPrefix: config.prefix }),
      }),
    ]);
    await app.get(LockService).withLock('k', () => undefined);
    expect(backend.keys).toEqual(['cfg:k']);
  });

  it('forRootAsync with useClass', async () => {
    const backend = new RecordingBackend();
    @Injectable()
    class LockConfig implements DistributedLockOptionsFactory {
      constructor(@Inject(CONFIG) private readonly config: { prefix: string }) {}
      create(): DistributedLockModuleOptions {
        return { backend, keyPrefix: `${this.config.prefix}class:` };
      }
    }
    const app = await start([DistributedLockModule.forRootAsync({ imports: [ConfigModule], useClass: LockConfig })]);
    await app.get(LockService).withLock('k', () => undefined);
    expect(backend.keys).toEqual(['cfg:class:k']);
  });

  it('is global by default: a module that does not import it can inject LockService', async () => {
    const app = await start([DistributedLockModule.forRoot({ backend: { type: 'memory' } }), FeatureModule]);
    expect(app.get(UsesLocks).locks).toBeInstanceOf(LockService);
  });

  it('with isGlobal: false, a module that does not import it cannot', async () => {
    const compiling = Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' }, isGlobal: false }), FeatureModule],
    }).compile();
    await expect(compiling).rejects.toThrow(/LockService/);
  });

  it('forRootAsync honours isGlobal: false too', async () => {
    const compiling = Test.createTestingModule({
      imports: [
        DistributedLockModule.forRootAsync({ isGlobal: false, useFactory: () => ({ backend: { type: 'memory' } }) }),
        FeatureModule,
      ],
    }).compile();
    await expect(compiling).rejects.toThrow(/LockService/);
  });

  describe('rejects bad options at bootstrap with InvalidLockArgumentError', () => {
    const cases: [string, unknown][] = [
      ['a negative leaseMs', { backend: { type: 'memory' }, leaseMs: -1 }],
      ['a leaseMs that is not a number', { backend: { type: 'memory' }, leaseMs: '30s' }],
      ['a negative waitMs', { backend: { type: 'memory' }, waitMs: -5 }],
      ['a keyPrefix that is not a string', { backend: { type: 'memory' }, keyPrefix: 7 }],
      ['an unknown backend type', { backend: { type: 'cassandra' } }],
      ['a missing backend', {}],
      ['no options at all', undefined],
    ];
    it.each(cases)('forRoot with %s', async (_name, options) => {
      const compiling = Test.createTestingModule({
        imports: [DistributedLockModule.forRoot(options as DistributedLockModuleOptions)],
      }).compile();
      await expect(compiling).rejects.toBeInstanceOf(InvalidLockArgumentError);
    });

    it('forRootAsync whose factory returns bad options', async () => {
      const compiling = Test.createTestingModule({
        imports: [
          DistributedLockModule.forRootAsync({ useFactory: async () => ({ backend: { type: 'memory' }, leaseMs: 0 }) }),
        ],
      }).compile();
      await expect(compiling).rejects.toBeInstanceOf(InvalidLockArgumentError);
    });

    it('does not close a custom backend object when the other options are bad', async () => {
      const backend = new RecordingBackend();
      const compiling = Test.createTestingModule({
        imports: [DistributedLockModule.forRoot({ backend, waitMs: -1 })],
      }).compile();
      await expect(compiling).rejects.toBeInstanceOf(InvalidLockArgumentError);
      expect(backend.closed).toBe(false);
    });
  });

  it('leaves a backend object it was given open on shutdown', async () => {
    const backend = new RecordingBackend();
    const app = await start([DistributedLockModule.forRoot({ backend })]);
    await app.close();
    opened.length = 0;
    expect(backend.closed).toBe(false);
  });
});
