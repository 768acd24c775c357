import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LockInfo } from '../../lib/index.js';
import { RedisMasters } from '../harness/redis-masters.js';
import { key, RedlockEngines } from './redlock-engines.js';

describe('redlock list()', () => {
  let masters: RedisMasters;
  let engines: RedlockEngines;

  beforeAll(async () => {
    masters = await RedisMasters.start(5);
    engines = new RedlockEngines(masters);
  }, 60_000);

  afterAll(async () => {
    await engines?.closeAll();
    await masters?.stop();
  });

  it("lists a held key that reaches a master already scanned while the listing runs (an acquisition's late write)", async () => {
    const engine = await engines.create();
    const prefix = key('late');
    // Held on masters 1-4 only, as when master 0's write is still on its way after the round's quorum.
    const late = await engine.acquire(`${prefix}:held`);
    const lateKey = engines.storeKey(`${prefix}:held`);
    const [owner, ttl] = [String(await masters.command(1, 'GET', lateKey)), String(await masters.command(1, 'PTTL', lateKey))];
    await masters.command(0, 'DEL', lateKey);
    // On master 0 only (no quorum: not listed), so that the first page (limit 1) fills up with master 0.
    await masters.command(0, 'SET', engines.storeKey(`${prefix}:stray`), 'someone', 'PX', '60000');

    const first = await engine.list({ prefix: `${prefix}:`, limit: 1 });
    expect(first).toEqual({ locks: [], cursor: '1:' });
    // The late write lands on master 0 between the pages.
    await masters.command(0, 'SET', lateKey, owner, 'PX', ttl);
    const seen: LockInfo[] = [...first.locks];
    let cursor = first.cursor;
    for (let pages = 0; cursor !== undefined && pages < 100; pages++) {
      const page = await engine.list({ prefix: `${prefix}:`, limit: 1, cursor });
      seen.push(...page.locks);
      cursor = page.cursor;
    }
    expect(seen).toEqual([expect.objectContaining({ key: `${prefix}:held`, held: true })]);
    await late.release();
  });
});
