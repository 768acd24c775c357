export * from './errors.js';
export type { Lock, LockOptions } from './engine/lock.js';
export type { LockMode } from './engine/lock-mode.js';
export type { LockEvent, LockEventType } from './engine/lock-events.js';
export { LockEngine, type LockEngineOptions, DEFAULT_KEY_PREFIX, DEFAULT_LEASE_MS, DEFAULT_WAIT_MS } from './engine/lock-engine.js';
export type { LockBackend, LockClaim, ClaimRequest, AttemptResult, Acquired, Busy } from './backends/lock-backend.js';
export { MemoryBackend } from './backends/memory/memory.backend.js';
export type * from './backends/backend-options.js';
export { createLockBackend } from './backends/create-backend.js';
