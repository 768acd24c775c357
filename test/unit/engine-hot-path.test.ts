import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  InvalidLockArgumentError,
  LockEngine,
  LockService,
  LockTimeoutError,
  MemoryBackend,
  type LockEvent,
} from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { LockEventHub } from '../../lib/engine/lock-event-hub.js';

describe('events built only for those who get them', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it("builds no event on acquire and release when only LockService's warnings are listened to, and still delivers those", async () => {
    const emitted = jest.spyOn(LockEventHub.prototype, 'emit');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const backend = new MemoryBackend();
    const engine = new LockEngine(backend, { leaseMs: 300 });
    new LockService(engine);
    await engine.withLock('quiet', () => undefined);
    await (await engine.acquire('quiet')).release();
    expect(emitted).not.toHaveBeenCalled();

    const warned = jest.fn();
    engine.listen(['lost'], warned);
    const lock = await engine.acquire('lost-one');
    backend.expire('lock:lost-one');
    await new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve()));
    expect(warned).toHaveBeenCalledWith(expect.objectContaining({ type: 'lost', key: 'lost-one' }));
    expect(emitted.mock.calls.map(([event]) => event.type)).toEqual(['lost']);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('"lost-one"'));
    await engine.close();
  });

  it('gives subscribers of `events` every event, and a listener only its types, until it stops', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const all: LockEvent['type'][] = [];
    const heard: LockEvent['type'][] = [];
    engine.events.subscribe((event) => all.push(event.type));
    const stop = engine.listen(['released', 'skipped'], (event) => heard.push(event.type));
    await engine.withLock('k', () => undefined);
    engine.noteSkipped('k', 'Jobs.run');
    stop();
    await engine.withLock('k', () => undefined);
    expect(all).toEqual(['acquired', 'released', 'skipped', 'acquired', 'released']);
    expect(heard).toEqual(['released', 'skipped']);
    await engine.close();
  });

  it('keeps emitting to the others when a listener throws', async () => {
    const engine = new LockEngine(new MemoryBackend());
    const heard: string[] = [];
    engine.listen(['released'], () => {
      throw new Error('broken logger');
    });
    engine.events.subscribe((event) => heard.push(event.type));
    await engine.withLock('k', () => undefined);
    expect(heard).toEqual(['acquired', 'released']);
    await engine.close();
  });
});

describe('options checked once (checkOptions)', () => {
  it('refuses bad options when checked, as an acquisition would', () => {
    const engine = new LockEngine(new MemoryBackend());
    expect(() => engine.checkOptions({ leaseMs: -1 })).toThrow(InvalidLockArgumentError);
    expect(() => engine.checkOptions({ mode: 'shared' as never })).toThrow(InvalidLockArgumentError);
  });

  it("acquires with the options as they were checked, against the engine's defaults, without looking at them again", async () => {
    const engine = new LockEngine(new MemoryBackend(), { waitMs: 0, maxWaitMs: 50 });
    const options = { leaseMs: 60_000, waitMs: 5_000 };
    const checked = engine.checkOptions(options);
    // Changed after the check: acquisitions use what was checked.
    options.leaseMs = -1;
    const lock = await engine.acquireScoped('k', checked);
    expect(lock.expiresAt - Date.now()).toBeGreaterThan(50_000);
    const startedAt = performance.now();
    await expect(engine.acquireScoped('k', checked)).rejects.toBeInstanceOf(LockTimeoutError);
    // waitMs was capped by the engine's maxWaitMs when checked.
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    await lock.release();
    const labelled = await engine.acquireScoped('k', checked.withLabel('nightly report'));
    expect((await engine.inspect('k')).holders[0]?.label).toBe('nightly report');
    await labelled.release();
    await engine.close();
  });

  it('leaves a kind of lock the store does not implement to each acquisition to refuse, naming its key', async () => {
    const plain: LockBackend = {
      name: 'plain',
      claim: (request) => new MemoryBackend().claim(request),
      close: async () => undefined,
    };
    const engine = new LockEngine(plain);
    const checked = engine.checkOptions({ mode: 'read' });
    expect(() => engine.acquireScoped('report', checked)).toThrow(
      'Lock "report": mode \'read\' is not supported by the plain backend',
    );
    await engine.close();
  });

  it("refuses options checked by another engine (their defaults are that engine's)", async () => {
    const [a, b] = [new LockEngine(new MemoryBackend()), new LockEngine(new MemoryBackend())];
    expect(() => b.acquireScoped('k', a.checkOptions())).toThrow(InvalidLockArgumentError);
    await Promise.all([a.close(), b.close()]);
  });
});
