import { describe, expect, it } from '@jest/globals';
import { LockEngine, LockTimeoutError, MemoryBackend } from '../../lib/index.js';
import type { LockBackend, LockClaim } from '../../lib/backend.js';

/** Whether `answer` settled before a timer due `ms` from now ran: load-independent, the engine's deadlines run on the same event loop. */
async function settlesWithin(answer: Promise<unknown>, ms: number): Promise<{ inTime: boolean; outcome: unknown }> {
  let ran = false;
  const timer = setTimeout(() => (ran = true), ms);
  let giveUp: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    answer.catch((error: unknown) => error),
    new Promise((resolve) => (giveUp = setTimeout(() => resolve('no answer a second after the bound'), ms + 1_000))),
  ]);
  clearTimeout(timer);
  clearTimeout(giveUp);
  return { inTime: !ran, outcome };
}

/** `memory` as a store whose releases hang until `answerReleases()`: a store that stopped answering (a Redis master cut off). */
function storeWithHungReleases(memory: MemoryBackend) {
  const hung: (() => void)[] = [];
  const backend: LockBackend = {
    name: 'hung-release',
    capabilities: memory.capabilities,
    claim: (request) => {
      const claim = memory.claim(request);
      return new Proxy(claim, {
        get(target, property: keyof LockClaim) {
          if (property === 'release')
            return (...args: Parameters<LockClaim['release']>) =>
              new Promise<boolean>((resolve) =>
                hung.push(() => void target.release(...args).then(resolve, () => resolve(false))),
              );
          const value = target[property];
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
    close: () => Promise.resolve(),
  };
  return { backend, answerReleases: () => hung.splice(0).forEach((answer) => answer()) };
}

describe('a busy answer by waitMs + 100 ms (at least 2 s), whatever the store does with the give-back', () => {
  it('answers LockTimeoutError by its bound while the release of its queued claim hangs', async () => {
    const memory = new MemoryBackend();
    const holderEngine = new LockEngine(memory);
    const holder = await holderEngine.acquire('busy');
    const { backend, answerReleases } = storeWithHungReleases(memory);
    const waiterEngine = new LockEngine(backend);
    const result = await settlesWithin(waiterEngine.acquire('busy', { waitMs: 2_000 }), 2_000 + 100);
    expect(result.inTime).toBe(true);
    expect(result.outcome).toBeInstanceOf(LockTimeoutError);
    answerReleases();
    await holder.release();
    await Promise.all([waiterEngine.close(), holderEngine.close()]);
  });
});
