import type { DynamicModule, Provider } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { LockEngine } from '../../engine/lock-engine.js';
import { DEFAULT_STORE_NAME } from '../lock-constants.js';
import { InvalidLockArgumentError } from '../../errors.js';
import { checkKnownFields } from '../../util/known-fields.js';
import { describe } from '../../engine/lock-options.js';
import type {
  DistributedLockModuleAsyncOptions,
  DistributedLockModuleOptions,
  DistributedLockOptionsFactory,
} from './distributed-lock-options.js';
import { LOCK_MODULE_IMPORTED } from '../lock-constants.js';
import { LockExplorer } from './lock-explorer.js';
import { Messages } from '../lock-messages.js';
import { LockService } from '../lock-service.js';
import { createLockStore, type LockStore } from './lock-store.js';
import { stopAcceptingProvider } from './stop-accepting-provider.js';
import {
  getLockEngineToken,
  getLockModuleOptionsToken,
  getLockServiceToken,
  getLockStoreToken,
} from './lock-store-tokens.js';

/** The store name `forRoot()` / `forRootAsync()` was given; checked at the call, since the providers' tokens derive from it. */
export function storeNameOf(name: unknown): string {
  if (name === undefined) return DEFAULT_STORE_NAME;
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new InvalidLockArgumentError(Messages.storeName(describe(name)));
  return name;
}

/** The providers of one store: its options provider(s), the store, its engine, its `LockService` and the explorer of its `@Locked()` methods. */
export function lockStoreProviders(
  name: string,
  options: Provider[],
  mapErrors?: boolean,
): { providers: Provider[]; exports: NonNullable<DynamicModule['exports']> } {
  const storeToken = getLockStoreToken(name);
  const providers: Provider[] = [
    ...options,
    {
      provide: storeToken,
      useFactory: (value: DistributedLockModuleOptions) => createLockStore(name, value, mapErrors),
      inject: [getLockModuleOptionsToken(name)],
    },
    { provide: LOCK_MODULE_IMPORTED, useValue: true },
    { provide: getLockEngineToken(name), useFactory: (store: LockStore) => store.engine, inject: [storeToken] },
    {
      provide: getLockServiceToken(name),
      useFactory: (engine: LockEngine) => new LockService(engine),
      inject: [getLockEngineToken(name)],
    },
    stopAcceptingProvider(name),
    {
      provide: `${storeToken}:explorer`,
      useFactory: (discovery: DiscoveryService, scanner: MetadataScanner, store: LockStore) =>
        new LockExplorer(discovery, scanner, store),
      inject: [DiscoveryService, MetadataScanner, storeToken],
    },
  ];
  return { providers, exports: [getLockServiceToken(name), getLockEngineToken(name)] };
}

const ASYNC_OPTION_NAMES = Object.keys({
  name: true,
  isGlobal: true,
  mapErrors: true,
  imports: true,
  useFactory: true,
  inject: true,
  useClass: true,
  useExisting: true,
} satisfies Record<keyof DistributedLockModuleAsyncOptions, true>);

/** The providers that make the options of `forRootAsync()`: a factory, a class of yours, or an existing provider. */
export function asyncOptionsProviders(name: string, options: DistributedLockModuleAsyncOptions): Provider[] {
  checkKnownFields(options, ASYNC_OPTION_NAMES, 'DistributedLockModule.forRootAsync()');
  if (options.mapErrors !== undefined && typeof options.mapErrors !== 'boolean')
    throw new InvalidLockArgumentError(Messages.mapErrorsOption(describe(options.mapErrors)));
  const token = getLockModuleOptionsToken(name);
  if (options.useFactory) return [{ provide: token, useFactory: options.useFactory, inject: options.inject ?? [] }];
  const factoryClass = options.useClass ?? options.useExisting;
  if (!factoryClass) throw new InvalidLockArgumentError(Messages.asyncOptionsSource());
  const fromFactory: Provider = {
    provide: token,
    useFactory: (factory: DistributedLockOptionsFactory) => factory.create(),
    inject: [factoryClass],
  };
  return options.useClass ? [{ provide: factoryClass, useClass: factoryClass }, fromFactory] : [fromFactory];
}
