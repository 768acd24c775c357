import type { LockEngine } from '../engine/lock-engine.js';
import type { LeaderService } from './leader.service.js';

/** @internal The leader service of each engine, for `@LeaderOnly()` methods (which find the engine through the lock registry). */
export const leaderRegistry = new WeakMap<LockEngine, LeaderService>();
