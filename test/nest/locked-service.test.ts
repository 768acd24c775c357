import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Injectable, Logger, type INestApplicationContext } from '@nestjs/common';
import { filter, firstValueFrom } from 'rxjs';
import { Test } from '@nestjs/testing';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  Locked,
  LockService,
  LockTimeoutError,
  MemoryBackend,
  type Lock,
} from '../../lib/index.js';
import { collectEvents, deferred, tick } from './nest-test-kit.js';

/** A read-modify-write with a gap in the middle: without mutual exclusion, concurrent calls lose updates. */
class Counter {
  value = 0;
  async increment(): Promise<void> {
    const read = this.value;
    await tick();
    this.value = read + 1;
  }
}

@Injectable()
class AccountService {
  readonly locked = new Counter();
  readonly unlocked = new Counter();
  readonly gates = new Map<string, { entered: () => void; leave: Promise<void> }>();

  constructor(private readonly locks: LockService) {}

  @Locked('counter')
  async lockedIncrement(): Promise<void> {
    await this.locked.increment();
  }

  async unlockedIncrement(): Promise<void> {
    await this.unlocked.increment();
  }

  /** Holds `account:{id}` until the test opens the gate. */
  @Locked({ key: 'account:{0}', waitMs: 0 })
  async hold(id: string): Promise<string | undefined> {
    const gate = this.gates.get(id)!;
    gate.entered();
    await gate.leave;
    return this.locks.current()?.key;
  }

  @Locked('account:{0.id}')
  async transfer(account: { id: string }): Promise<[Lock | undefined, Lock | undefined]> {
    const outer = this.locks.current();
    const inner = await this.audit(account);
    return [outer, inner];
  }

  @Locked({ key: 'account:{0.id}', waitMs: 100 })
  async audit(_account: { id: string }): Promise<Lock | undefined> {
    return this.locks.current();
  }

  @Locked('account:{0}')
  async fail(_id: string): Promise<never> {
    throw new Error('boom');
  }

  @Locked({ key: 'report', onBusy: 'skip' })
  async skipIfBusy(runs: string[]): Promise<string> {
    runs.push('ran');
    return 'done';
  }

  @Locked({ key: 'report', waitMs: 0 })
  async throwIfBusy(): Promise<string> {
    return 'done';
  }

  @Locked({ key: (account: { id: string }, amount: number) => `ledger:${account.id}:${amount}` })
  async byFunction(_account: { id: string }, _amount: number): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  @Locked('plain')
  syncMethod(value: number): number {
    return value * 2;
  }
}

describe('@Locked on a provider method', () => {
  let app: INestApplicationContext;
  let service: AccountService;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [AccountService],
    }).compile();
    app = await moduleRef.init();
    service = app.get(AccountService);
    locks = app.get(LockService);
  });

  afterAll(() => app.close());

  it('20 concurrent calls on one key lose no update (the same calls without the lock do)', async () => {
    await Promise.all(Array.from({ length: 20 }, () => service.lockedIncrement()));
    await Promise.all(Array.from({ length: 20 }, () => service.unlockedIncrement()));
    expect(service.locked.value).toBe(20);
    expect(service.unlocked.value).toBeLessThan(20);
  });

  it('acquires exactly once per call', async () => {
    const events = collectEvents(locks);
    await Promise.all(Array.from({ length: 5 }, () => service.lockedIncrement()));
    expect(events.filter((event) => event.type === 'acquired')).toHaveLength(5);
    expect(events.filter((event) => event.type === 'released')).toHaveLength(5);
  });

  it('calls on different keys run in parallel, on the same key they exclude each other', async () => {
    const gateA = { ...deferred(), left: deferred() };
    const gateB = { ...deferred(), left: deferred() };
    service.gates.set('a', { entered: () => gateA.resolve(), leave: gateA.left.promise });
    service.gates.set('b', { entered: () => gateB.resolve(), leave: gateB.left.promise });
    const a = service.hold('a');
    const b = service.hold('b');
    // Both are inside at the same time; with waitMs 0, a serialised second call would have rejected instead.
    await Promise.all([gateA.promise, gateB.promise]);
    await expect(service.hold('a')).rejects.toBeInstanceOf(LockTimeoutError);
    gateA.left.resolve();
    gateB.left.resolve();
    await expect(Promise.all([a, b])).resolves.toEqual(['account:a', 'account:b']);
  });

  it('is re-entrant: a locked method calling another on the same key gets the same fence at once', async () => {
    const [outer, inner] = await service.transfer({ id: '42' });
    expect(outer).toMatchObject({ key: 'account:42' });
    expect(typeof outer!.fence).toBe('number');
    expect(inner!.fence).toBe(outer!.fence);
    const free = await locks.tryAcquire('account:42');
    expect(free).not.toBeNull();
    await free!.release();
  });

  it('LockService.current() inside is the held lock; outside it is undefined', async () => {
    const events = collectEvents(locks);
    const [outer] = await service.transfer({ id: '7' });
    const acquired = events.find((event) => event.type === 'acquired');
    expect(outer!.fence).toBe(acquired && 'fence' in acquired ? acquired.fence : NaN);
    expect(outer!.signal.aborted).toBe(true);
    expect(locks.current()).toBeUndefined();
  });

  it('releases the lock when the method throws, and rethrows its error', async () => {
    await expect(service.fail('x')).rejects.toThrow('boom');
    const lock = await locks.tryAcquire('account:x');
    expect(lock).not.toBeNull();
    await lock!.release();
  });

  it("onBusy 'skip' resolves undefined without running the method", async () => {
    const runs: string[] = [];
    await expect(service.skipIfBusy(runs)).resolves.toBe('done');
    const holder = await locks.acquire('report');
    await expect(service.skipIfBusy(runs)).resolves.toBeUndefined();
    await holder.release();
    expect(runs).toEqual(['ran']);
  });

  it("onBusy 'throw' (the default) rejects with LockTimeoutError naming the key", async () => {
    const holder = await locks.acquire('report');
    await expect(service.throwIfBusy()).rejects.toMatchObject({ name: 'LockTimeoutError', key: 'report' });
    await holder.release();
    await expect(service.throwIfBusy()).resolves.toBe('done');
  });

  it('a function key receives the arguments', async () => {
    await expect(service.byFunction({ id: 'acc' }, 5)).resolves.toBe('ledger:acc:5');
  });

  it('a template naming a missing argument rejects with InvalidLockArgumentError and locks nothing', async () => {
    const events = collectEvents(locks);
    await expect(service.transfer({} as { id: string })).rejects.toBeInstanceOf(InvalidLockArgumentError);
    expect(events).toEqual([]);
  });

  it('a synchronous method becomes async and keeps its result', async () => {
    await expect(service.syncMethod(21)).resolves.toBe(42);
  });

  it('keeps the method name', () => {
    expect(AccountService.prototype.lockedIncrement.name).toBe('lockedIncrement');
  });
});

describe('LockService events', () => {
  it('logs a warning with the key and fence when a lock is lost, and lets the holder know', async () => {
    const store = new MemoryBackend();
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: store, leaseMs: 300 })],
    }).compile();
    const app = await moduleRef.init();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const locks = app.get(LockService);
      const lost = firstValueFrom(locks.events.pipe(filter((event) => event.type === 'lost')));
      const lock = await locks.acquire('payments:7');
      // The store forgets the lease; the next renewal finds out.
      store.expire('lock:payments:7');
      await expect(lost).resolves.toMatchObject({ key: 'payments:7', fence: lock.fence });
      expect(lock.signal.aborted).toBe(true);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toContain('"payments:7"');
      expect(String(warn.mock.calls[0][0])).toContain(`fence ${lock.fence}`);
    } finally {
      warn.mockRestore();
      await app.close();
    }
  });
});
