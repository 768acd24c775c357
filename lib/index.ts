/**
 * What applications use: the Nest module, `LockService`, `@Locked`, the errors, the engine for use
 * without Nest, leader election, fencing, health and metrics. Writing a store of your own: see
 * `nestjs-distributed-lock/backend`.
 * @packageDocumentation
 */
export * from './errors.js';
export { isMultiLock, type Lock, type MultiLock, type LockOptions } from './engine/lock.js';
export type { LockMode } from './engine/lock-mode.js';
export type { AcquireFailure, LockEvent, LockEventType } from './engine/lock-events.js';
export type {
  LockInfo,
  LockHolder,
  LockWaiter,
  LockList,
  ListLocksOptions,
  ForceReleaseOptions,
} from './engine/lock-info.js';
export { LockEngine, type LockEngineOptions } from './engine/lock-engine.js';
export type { CloseOptions } from './engine/drain.js';
export { MemoryBackend } from './backends/memory/memory-backend.js';
export type * from './backends/backend-options.js';
export { createLockBackend } from './backends/create-backend.js';
export { DistributedLockModule } from './module/distributed-lock-module.js';
export type {
  DistributedLockModuleOptions,
  DistributedLockModuleAsyncOptions,
  DistributedLockOptionsFactory,
} from './nest/store/distributed-lock-options.js';
export {
  InjectLockService,
  getLockServiceToken,
  getLockEngineToken,
  getLockModuleOptionsToken,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
} from './nest/store/lock-store-tokens.js';
export { LockService } from './nest/lock-service.js';
export { DistributedLockAdminModule } from './admin/distributed-lock-admin-module.js';
export type { DistributedLockAdminOptions, AdminGuard } from './admin/admin-options.js';
export { Locked } from './nest/locked/locked-decorator.js';
export { LockedJob, type LockedJobOptions } from './nest/locked/locked-job-decorator.js';
export type { LockedOptions, OnBusy } from './nest/locked/locked-options.js';
export type { LockKey, LockKeys, RequestPart } from './nest/locked/key-template.js';
export { LockErrorsFilter } from './nest/errors/lock-errors-filter.js';
export {
  LockBusyException,
  LockStoreUnavailableException,
  LockShuttingDownException,
  LockLostException,
  type LockAnswerHeaders,
} from './nest/errors/lock-http-exceptions.js';
export { StaleFenceException } from './nest/errors/stale-fence-exception.js';
export { LockErrorCode } from './nest/errors/lock-error-codes.js';
export { LockGraphQLError, type LockErrorPayload } from './nest/errors/lock-context-errors.js';
export {
  LockHealthIndicator,
  checkLockStore,
  type LockHealthStatus,
  type LockHealthResult,
  type LockHealthOptions,
} from './health/lock-health-indicator.js';
export {
  subscribeLockMetrics,
  type LockMetricsOptions,
  type PrometheusRegistryLike,
} from './metrics/prometheus-metrics.js';
export {
  subscribeLockTracing,
  lockEventAttributes,
  LOCK_TRACE_ATTRIBUTES,
  type LockTracingOptions,
} from './metrics/opentelemetry-tracing.js';
export type { LockEventSource, MetricsSubscription } from './metrics/observable-like.js';
export { LeaderService } from './leader/leader-service.js';
export { InjectLeaderService, getLeaderServiceToken } from './leader/leader-tokens.js';
export { LeaderOnly, OnLeadership, type LeadershipDecoratorOptions } from './leader/leadership-decorators.js';
export type {
  Leadership,
  LeaderInfo,
  LeadershipChange,
  LeadOptions,
  AfterTask,
  Campaign,
} from './leader/leadership.js';
export { fenceOf } from './fencing/fence-of.js';
export { fenceTableDdl, type FenceDialect } from './fencing/fence-table.js';
export {
  SqlFenceGuard,
  type SqlFenceGuardOptions,
  type FencePruneOptions,
  type FenceQuery,
} from './fencing/sql-fence-guard.js';
export { RedisFenceGuard } from './fencing/redis-fence-guard.js';
export type { FenceRedisClient } from './fencing/fence-redis-client.js';
