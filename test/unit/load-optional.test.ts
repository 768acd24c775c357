import { describe, expect, it } from '@jest/globals';
import { InvalidLockArgumentError } from '../../lib/index.js';
import { loadOptional } from '../../lib/util/load-optional.js';

describe('loadOptional, the one loader of optional peers (drivers, metrics, Nest transports)', () => {
  it('imports an installed package', async () => {
    const ioredis = await loadOptional<{ Redis: unknown }>('ioredis', "The 'redis' backend");
    expect(typeof ioredis.Redis).toBe('function');
  });

  it('names the package to install when it is missing, with the import error as cause', async () => {
    const error = await loadOptional('not-an-installed-package-xyz', 'subscribeLockMetrics').catch(
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InvalidLockArgumentError);
    expect((error as Error).message).toBe(
      'subscribeLockMetrics needs the "not-an-installed-package-xyz" package: npm install not-an-installed-package-xyz',
    );
    expect((error as Error).cause).toBeDefined();
  });
});
