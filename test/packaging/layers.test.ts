import { describe, expect, it } from '@jest/globals';
// @ts-expect-error a plain .mjs script without types
import { checkLayers } from '../../scripts/check-layers.mjs';

describe('lib/ layers', () => {
  it('every import runs down the layers (engine at the ground, the module on top) and no files import each other in a circle', () => {
    expect(checkLayers()).toEqual([]);
  });
});
