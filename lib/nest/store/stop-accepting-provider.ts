import type { Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { DistributedLockModuleOptions } from './distributed-lock-options.js';
import { getLockModuleOptionsToken, getLockStoreToken } from './lock-store-tokens.js';
import { StopAcceptingOnShutdown } from '../shutdown/stop-accepting.js';

/**
 * @internal The stop-accepting step of one store's module, when its options ask for it
 * (`stopAcceptingOnShutdown: true`, from `forRoot()` or a `forRootAsync()` factory). Made after the
 * store, whose bootstrap checks the option; it waits for requests as long as the store drains.
 */
export function stopAcceptingProvider(name: string): Provider {
  const storeToken = getLockStoreToken(name);
  return {
    provide: `${storeToken}:stop-accepting`,
    useFactory: (
      host: HttpAdapterHost,
      options: DistributedLockModuleOptions,
      store: { readonly gracefulShutdownTimeoutMs: number },
    ) =>
      options.stopAcceptingOnShutdown === true
        ? new StopAcceptingOnShutdown(host, store.gracefulShutdownTimeoutMs)
        : {},
    inject: [HttpAdapterHost, getLockModuleOptionsToken(name), storeToken],
  };
}
