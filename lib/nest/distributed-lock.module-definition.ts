import { ConfigurableModuleBuilder, type ConfigurableModuleOptionsFactory } from '@nestjs/common';
import type { DistributedLockModuleOptions } from './distributed-lock.options.js';

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: DISTRIBUTED_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DistributedLockModuleOptions>({ moduleName: 'DistributedLock' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal !== false }))
  .build();

/**
 * Argument of `DistributedLockModule.forRootAsync()`: `imports`, `inject` and one of `useFactory`,
 * `useClass` (a {@link DistributedLockOptionsFactory}) or `useExisting`; plus `isGlobal` (default `true`).
 */
export type DistributedLockModuleAsyncOptions = typeof ASYNC_OPTIONS_TYPE;

/** A class for `forRootAsync({ useClass })` / `useExisting`: Nest calls its `create()`. */
export type DistributedLockOptionsFactory = ConfigurableModuleOptionsFactory<DistributedLockModuleOptions, 'create'>;
