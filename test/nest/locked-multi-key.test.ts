import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, HttpCode, Injectable, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLockModule,
  InvalidLockArgumentError,
  isMultiLock,
  Locked,
  LockService,
  type Lock,
  type MultiLock,
} from '../../lib/index.js';
import { deferred, tick } from './nest-test-kit.js';

/** What a transfer saw of its lock: the multi handle, and what a nested single-key call got. */
interface Seen {
  readonly lock: MultiLock;
  readonly nested: Lock | undefined;
}

@Injectable()
class Bank {
  readonly balances = new Map<string, number>();
  readonly seen: Seen[] = [];
  /** Set by a test to hold a transfer inside its method. */
  gate: { entered: () => void; leave: Promise<void> } | undefined;

  constructor(private readonly locks: LockService) {}

  /** Non-atomic on both accounts: a gap between read and write, so a missing lock loses updates. */
  @Locked({ key: ['account:{0}', 'account:{1}'], waitMs: 30_000 })
  async transfer(from: string, to: string, amount: number): Promise<void> {
    const lock = this.locks.current();
    if (!isMultiLock(lock)) throw new Error('current() is not the multi-key lock');
    const fromBalance = this.balances.get(from) ?? 0;
    const toBalance = this.balances.get(to) ?? 0;
    await tick();
    if (this.gate) {
      this.gate.entered();
      await this.gate.leave;
    }
    this.balances.set(from, fromBalance - amount);
    this.balances.set(to, toBalance + amount);
    this.seen.push({ lock, nested: await this.audit(from) });
  }

  /** A job on two accounts that runs only when both are free at once. */
  @Locked({ key: ['account:{0}', (_a: string, b: string) => `account:${b}`], onBusy: 'skip' })
  async reconcile(_a: string, _b: string): Promise<string> {
    return 'ran';
  }

  /** The positional form: (keys, leaseMs, waitMs). */
  @Locked(['ledger:{1}', 'ledger:{0}'], 5_000, 0)
  async ledgers(_a: string, _b: string): Promise<Lock | undefined> {
    return this.locks.current();
  }

  @Locked({ key: 'account:{0}', waitMs: 0 })
  async audit(_account: string): Promise<Lock | undefined> {
    return this.locks.current();
  }
}

@Controller('transfers')
class TransferController {
  constructor(private readonly locks: LockService) {}

  @Post(':from/:to')
  @HttpCode(200)
  @Locked({ key: ['account:{params.from}', 'account:{params.to}'], waitMs: 0 })
  create(@Param('from') _from: string, @Param('to') _to: string) {
    const lock = this.locks.current();
    return isMultiLock(lock) ? { key: lock.key, keys: lock.keys, fences: lock.fences } : {};
  }
}

describe('@Locked() with a key list (memory backend)', () => {
  let app: INestApplication;
  let bank: Bank;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
      providers: [Bank],
      controllers: [TransferController],
    }).compile();
    app = await moduleRef.createNestApplication({ logger: false }).init();
    bank = app.get(Bank);
    locks = app.get(LockService);
  });

  afterAll(() => app?.close());

  it('transfers in opposite directions at once: no deadlock, no lost update, the multi handle is current()', async () => {
    bank.balances.set('a', 1_000).set('b', 1_000).set('c', 1_000);
    bank.seen.length = 0;
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      calls.push(
        bank.transfer('a', 'b', 1),
        bank.transfer('b', 'a', 2),
        bank.transfer('c', 'a', 3),
        bank.transfer('b', 'c', 4),
      );
    }
    await Promise.all(calls);
    // a: -40 +80 +120 ; b: +40 -80 -160 ; c: -120 +160
    expect(Object.fromEntries(bank.balances)).toEqual({ a: 1_160, b: 800, c: 1_040 });
    expect(bank.seen).toHaveLength(160);
    const fences = bank.seen.map(({ lock }) => Object.values(lock.fences) as number[]);
    for (const { lock, nested } of bank.seen) {
      expect(lock.keys).toHaveLength(2);
      expect([...lock.keys].sort()).toEqual(lock.keys);
      expect(lock.fence).toBeUndefined();
      // The nested single-key call re-entered the part, with its fence.
      expect(nested?.fence).toBe(lock.fences[nested!.key]);
    }
    // Every hold of one key has its own fence.
    for (const key of ['account:a', 'account:b', 'account:c']) {
      const perKey = bank.seen.filter(({ lock }) => key in lock.fences).map(({ lock }) => lock.fences[key]);
      expect(new Set(perKey).size).toBe(perKey.length);
    }
    expect(fences.flat().every((fence) => typeof fence === 'number')).toBe(true);
  });

  it('holds both accounts while the method runs and frees both after', async () => {
    const entered = deferred();
    const leave = deferred();
    bank.gate = { entered: entered.resolve, leave: leave.promise };
    const running = bank.transfer('x', 'y', 5);
    await entered.promise;
    bank.gate = undefined;
    expect(await locks.tryAcquire('account:x')).toBeNull();
    expect(await locks.tryAcquire('account:y')).toBeNull();
    leave.resolve();
    await running;
    const both = await locks.tryAcquire(['account:y', 'account:x']);
    expect(both).not.toBeNull();
    await both!.release();
  });

  it('over HTTP: 200 with both fences when free; 409 naming the busy key when one is held, and the other key is not kept', async () => {
    const ok = await request(app.getHttpServer()).post('/transfers/q/p');
    expect(ok.status).toBe(200);
    expect(ok.body.keys).toEqual(['account:p', 'account:q']);
    expect(ok.body.key).toBe('account:p,account:q');
    expect(Object.keys(ok.body.fences).sort()).toEqual(['account:p', 'account:q']);

    const held = await locks.acquire('account:q');
    const busy = await request(app.getHttpServer()).post('/transfers/p/q');
    expect(busy.status).toBe(409);
    expect(busy.body.key).toBe('account:q');
    const p = await locks.tryAcquire('account:p');
    expect(p).not.toBeNull();
    await p!.release();
    await held.release();
  });

  it('the positional form @Locked([...], leaseMs, waitMs) locks every key with those options', async () => {
    const lock = await bank.ledgers('2', '1');
    expect(isMultiLock(lock) && lock.keys).toEqual(['ledger:1', 'ledger:2']);
    const held = await locks.acquire('ledger:2');
    await expect(bank.ledgers('1', '2')).rejects.toMatchObject({
      name: 'LockTimeoutError',
      key: 'ledger:2',
      waitMs: 0,
    });
    await held.release();
  });

  it("onBusy 'skip' with a key list (a template and a function): skipped while either key is held, and then nothing is kept", async () => {
    const held = await locks.acquire('account:n');
    await expect(bank.reconcile('m', 'n')).resolves.toBeUndefined();
    const m = await locks.tryAcquire('account:m');
    expect(m).not.toBeNull();
    await m!.release();
    await held.release();
    await expect(bank.reconcile('m', 'n')).resolves.toBe('ran');
  });

  it('a key list naming a missing argument throws InvalidLockArgumentError and takes nothing', async () => {
    const error = await bank.transfer('a', undefined as never, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toMatch(/names \{1\}, which is missing/);
    const a = await locks.tryAcquire('account:a');
    expect(a).not.toBeNull();
    await a!.release();
  });
});
