import { describe, expect, it } from '@jest/globals';
// @ts-expect-error a plain .mjs script without types
import { checkLayers, isKebabCaseFile } from '../../scripts/check-layers.mjs';

describe('lib/ layers', () => {
  it('every import runs down the layers (engine at the ground, the module on top) and no files import each other in a circle', () => {
    expect(checkLayers()).toEqual([]);
  });

  it('file names are kebab-case', () => {
    expect(
      ['lock-engine.ts', 'redis-claim.ts', 'errors.ts', 'ioredis6-client.ts'].filter((name) => !isKebabCaseFile(name)),
    ).toEqual([]);
    expect(
      [
        'zookeeper.claim.ts',
        'lock.service.ts',
        'redisClaim.ts',
        'lock_engine.ts',
        'lock--engine.ts',
        '-lock.ts',
      ].filter(isKebabCaseFile),
    ).toEqual([]);
  });
});
