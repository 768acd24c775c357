import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import request from 'supertest';
import {
  DistributedLockModule,
  LockEngine,
  LockBackendError,
  LockHealthIndicator,
  LockService,
  LockShuttingDownError,
  MemoryBackend,
  checkLockStore,
  subscribeLockMetrics,
  subscribeLockTracing,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: LockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeoutMs: 300 })]);
  }
}

/** A memory store whose ping can be made to fail or hang, as a real store's would. */
class SwitchableBackend extends MemoryBackend {
  override readonly name = 'switchable' as 'memory';
  pingMode: 'ok' | 'fail' | 'hang' = 'ok';
  override async ping(): Promise<void> {
    if (this.pingMode === 'fail') throw new Error('connect ECONNREFUSED');
    if (this.pingMode === 'hang') await new Promise(() => undefined);
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('LockHealthIndicator with @nestjs/terminus', () => {
  async function start(backend: LockBackend) {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, DistributedLockModule.forRoot({ backend })],
      controllers: [HealthController],
      providers: [LockHealthIndicator],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    return app;
  }

  it('reports up with the ping latency when the store answers', async () => {
    const res = await request((await start(new SwitchableBackend())).getHttpServer()).get('/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.info.locks).toMatchObject({ status: 'up', backend: 'switchable', pinged: true });
    expect(typeof res.body.info.locks.latencyMs).toBe('number');
  });

  it('reports down (503) with the reason when the ping fails', async () => {
    const backend = new SwitchableBackend();
    const server = (await start(backend)).getHttpServer();
    backend.pingMode = 'fail';
    const res = await request(server).get('/health');
    expect(res.status).toBe(503);
    expect(res.body.error.locks).toMatchObject({
      status: 'down',
      backend: 'switchable',
      message: 'connect ECONNREFUSED',
    });
  });

  it('reports down when the ping does not answer within timeoutMs', async () => {
    const backend = new SwitchableBackend();
    const server = (await start(backend)).getHttpServer();
    backend.pingMode = 'hang';
    const res = await request(server).get('/health');
    expect(res.status).toBe(503);
    expect(res.body.error.locks.message).toMatch(/no answer within 300 ms/);
  });

  it('a backend without ping() is reported up without a round trip', async () => {
    const backend: LockBackend = {
      name: 'noping',
      claim: (r) => new MemoryBackend().claim(r),
      close: async () => undefined,
    };
    expect(await checkLockStore(new LockEngine(backend))).toEqual({
      status: 'up',
      backend: 'noping',
      store: 'default',
      pinged: false,
    });
  });
});

describe('subscribeLockMetrics (prom-client)', () => {
  it('counts acquisitions, timeouts, losses and extend failures, and observes wait and hold times', async () => {
    const registry = new Registry();
    const engine = new LockEngine(new MemoryBackend(), { leaseMs: 5_000, waitMs: 0 });
    const subscription = await subscribeLockMetrics(engine.events, registry);
    const lock = await engine.acquire('a');
    await expect(engine.acquire('a')).rejects.toThrow(/busy/);
    await lock.release();
    const read = await engine.acquire('r', { mode: 'read' });
    await read.release();
    const text = await registry.metrics();
    expect(text).toMatch(/distributed_lock_acquired_total\{backend="memory",mode="exclusive",store="default"\} 1/);
    expect(text).toMatch(/distributed_lock_acquired_total\{backend="memory",mode="read",store="default"\} 1/);
    expect(text).toMatch(/distributed_lock_timeouts_total\{backend="memory",store="default"\} 1/);
    expect(text).toMatch(
      /distributed_lock_wait_seconds_count\{backend="memory",outcome="acquired",store="default"\} 2/,
    );
    expect(text).toMatch(/distributed_lock_wait_seconds_count\{backend="memory",outcome="timeout",store="default"\} 1/);
    expect(text).toMatch(
      /distributed_lock_hold_seconds_count\{backend="memory",outcome="released",store="default"\} 2/,
    );
    subscription.unsubscribe();
    await engine.close();
  });

  it('counts a lock lost behind its holder back, and reuses metrics already registered', async () => {
    const registry = new Registry();
    const backend = new MemoryBackend();
    const engine = new LockEngine(backend, { leaseMs: 60, waitMs: 0 });
    await subscribeLockMetrics(engine.events, registry);
    await subscribeLockMetrics(engine.events, registry); // a second module sharing the registry: no "already registered" error
    const lock = await engine.acquire('lost');
    // Block the event loop past the lease: the local lease clock declares the lock lost.
    const until = performance.now() + 120;
    while (performance.now() < until);
    await expect(lock.extend()).rejects.toThrow(/lost/);
    const text = await registry.metrics();
    expect(text).toMatch(/distributed_lock_lost_total\{backend="memory",store="default"\} 2/); // two subscriptions, one loss each
    await engine.close();
  });

  it('counts failed renewals (store down during extend)', async () => {
    const registry = new Registry();
    const base = new MemoryBackend();
    let down = false;
    const backend: LockBackend = {
      name: 'flaky',
      claim: (request) => {
        const claim = base.claim(request);
        return {
          ...claim,
          tryAcquire: () => claim.tryAcquire(),
          waitForChange: (m, s) => claim.waitForChange(m, s),
          release: () => claim.release(),
          renew: (ms) => (down ? Promise.reject(new Error('ECONNRESET')) : claim.renew(ms)),
        };
      },
      close: async () => undefined,
    };
    const engine = new LockEngine(backend, { leaseMs: 5_000 });
    await subscribeLockMetrics(engine.events, registry, { prefix: 'app_lock_' });
    const lock = await engine.acquire('x');
    down = true;
    await expect(lock.extend()).rejects.toThrow(/ECONNRESET/);
    down = false;
    await lock.release();
    expect(await registry.metrics()).toMatch(/app_lock_extend_failures_total\{backend="flaky",store="default"\} 1/);
    await engine.close();
  });
});

/** A store that is down: every attempt rejects, as a refused connection would. */
const unreachable: LockBackend = {
  name: 'unreachable',
  claim: () => ({
    tryAcquire: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:6379')),
    waitForChange: async () => undefined,
    renew: async () => false,
    release: async () => true,
  }),
  close: async () => undefined,
};

/** An engine draining (a lock held keeps it so) and one whose store is down: one refusal of each. */
async function refuseOneOfEach(subscribe: (engine: LockEngine) => Promise<unknown>): Promise<void> {
  const draining = new LockEngine(new MemoryBackend(), { waitMs: 0 });
  const down = new LockEngine(unreachable, { waitMs: 0 });
  await subscribe(draining);
  await subscribe(down);
  const job = await draining.acquire('job');
  const closing = draining.close({ gracefulMs: 60_000 });
  await expect(draining.acquire('orders:1')).rejects.toThrow(LockShuttingDownError);
  await expect(down.acquire('orders:1')).rejects.toThrow(LockBackendError);
  await job.release();
  await closing;
  await down.close();
}

describe('a deploy and an outage, told apart', () => {
  it("Prometheus: acquire_failures_total{reason} counts the drain's refusals apart from the store's failures", async () => {
    const registry = new Registry();
    await refuseOneOfEach((engine) => subscribeLockMetrics(engine.events, registry));
    const text = await registry.metrics();
    expect(text).toMatch(
      /distributed_lock_acquire_failures_total\{backend="memory",reason="shutting-down",store="default"\} 1/,
    );
    expect(text).toMatch(
      /distributed_lock_acquire_failures_total\{backend="unreachable",reason="store-unavailable",store="default"\} 1/,
    );
    expect(text).not.toMatch(/distributed_lock_(lost|timeouts)_total\{[^}]*\} [1-9]/);
  });

  it('OpenTelemetry: lock.acquire-failed with lock.failure; only the outage is an ERROR', async () => {
    const spans: { name: string; attributes: Record<string, unknown>; status?: { code: number } }[] = [];
    const tracer = {
      startSpan(name: string, options: { attributes: Record<string, unknown> }) {
        const span = { name, attributes: options.attributes, status: undefined as { code: number } | undefined };
        spans.push(span);
        return { setStatus: (s: { code: number }) => (span.status = s), end: () => undefined };
      },
    };
    await refuseOneOfEach((engine) => subscribeLockTracing(engine.events, { tracer }));
    const failed = spans.filter((span) => span.name === 'lock.acquire-failed');
    expect(
      failed.map((span) => [span.attributes['lock.backend'], span.attributes['lock.failure'], span.status?.code]),
    ).toEqual([
      ['memory', 'shutting-down', undefined],
      ['unreachable', 'store-unavailable', 2], // SpanStatusCode.ERROR
    ]);
  });
});

describe('subscribeLockTracing (OpenTelemetry)', () => {
  it('makes a span per event with the key and fence, ERROR status for timeouts', async () => {
    const spans: { name: string; attributes: Record<string, unknown>; status?: { code: number }; ended: boolean }[] =
      [];
    const tracer = {
      startSpan(name: string, options: { attributes: Record<string, unknown> }) {
        const span = {
          name,
          attributes: options.attributes,
          status: undefined as { code: number } | undefined,
          ended: false,
        };
        spans.push(span);
        return { setStatus: (s: { code: number }) => (span.status = s), end: () => (span.ended = true) };
      },
    };
    const engine = new LockEngine(new MemoryBackend(), { waitMs: 0 });
    const subscription = await subscribeLockTracing(engine.events, { tracer });
    const lock = await engine.acquire('orders:1');
    await expect(engine.acquire('orders:1')).rejects.toThrow();
    await lock.release();
    subscription.unsubscribe();
    await engine.close();
    expect(spans.map((s) => s.name)).toEqual(['lock.acquired', 'lock.timeout', 'lock.released']);
    expect(spans[0].attributes).toMatchObject({
      'lock.key': 'orders:1',
      'lock.fence': lock.fence,
      'lock.backend': 'memory',
      'lock.store': 'default',
      'lock.mode': 'exclusive',
    });
    expect(spans[2].attributes).toMatchObject({ 'lock.key': 'orders:1', 'lock.fence': lock.fence });
    expect(spans[1].status?.code).toBe(2); // SpanStatusCode.ERROR
    expect(spans.every((s) => s.ended)).toBe(true);
  });
});

describe('LockService.events feeds the adapters inside Nest', () => {
  it('subscribeLockMetrics on the service events', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ backend: { type: 'memory' } })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const registry = new Registry();
    const locks = app.get(LockService);
    await subscribeLockMetrics(locks.events, registry);
    await locks.withLock('job', () => undefined);
    expect(await registry.metrics()).toMatch(
      /distributed_lock_acquired_total\{backend="memory",mode="exclusive",store="default"\} 1/,
    );
  });
});
