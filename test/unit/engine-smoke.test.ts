import { describe, expect, it } from '@jest/globals';
import { LockEngine, MemoryBackend, LockTimeoutError } from '../../lib/index.js';

describe('engine smoke', () => {
  it('acquires, excludes, releases', async () => {
    const engine = new LockEngine(new MemoryBackend(), { leaseMs: 1000, waitMs: 50 });
    const a = await engine.acquire('k');
    await expect(engine.acquire('k')).rejects.toBeInstanceOf(LockTimeoutError);
    await a.release();
    const b = await engine.acquire('k');
    expect(b.fence).toBeGreaterThan(a.fence!);
    await engine.withLock('k2', async (lock) => {
      expect(engine.current()).toBe(lock);
      const inner = await engine.acquire('k2');
      expect(inner.fence).toBe(lock.fence);
      await inner.release();
      expect(lock.signal.aborted).toBe(false);
    });
    await engine.close();
  });
});
