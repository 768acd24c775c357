import { InvalidLockArgumentError } from '../../errors.js';
import { checkKnownFields } from '../../util/known-fields.js';
import { describe } from '../../engine/lock-options.js';
import type { LockKey, LockKeys } from './key-template.js';
import { Messages } from '../lock-messages.js';
import { Locked } from './locked-decorator.js';

/** Options of `@LockedJob({ ... })`. */
export interface LockedJobOptions {
  /** The lock key. Default: `'ClassName.methodName'`. */
  key?: LockKeys;
  /**
   * Hold at least: the key stays taken until this long after the job started, even when it ends
   * first or its process exits, so instances whose timers fire a little later skip the tick. Keep it
   * above the spread of the instances' firing times (clock skew + timer lateness) and below the
   * schedule's period: half the period is a good value. Default 1 000 ms (`DEFAULT_JOB_MIN_HOLD_MS`);
   * `0` turns it off (ZooKeeper cannot keep it).
   */
  minHoldMs?: number;
  /** Hold at most: the job's `current().signal` aborts this long after it started and the next tick may run elsewhere. Default: none. */
  maxHoldMs?: number;
  /** Lease length in ms (renewed while the job runs): how soon another instance may run after this one crashed. Default: the module's `leaseMs`. */
  leaseMs?: number;
  /** The lock store: the `name` of a `DistributedLockModule.forRoot({ name })`. */
  store?: string;
  /** What the job is doing, for operators (`LockService.inspect`, the CLI, the admin page): a template or a function, as on `@Locked()`. */
  label?: LockKey;
}

/** `@LockedJob()`'s default hold-at-least: covers instances whose ticks fire up to a second apart. Set `minHoldMs` for schedules of 2 s or less. */
export const DEFAULT_JOB_MIN_HOLD_MS = 1_000;

const JOB_OPTION_NAMES = ['key', 'minHoldMs', 'maxHoldMs', 'leaseMs', 'store', 'label'];

/**
 * Runs a scheduled job on one instance per tick: `@Locked({ onBusy: 'skip', waitMs: 0, minHoldMs })`.
 * An instance that finds the key taken (another runs, or ran, this tick) skips the call, which
 * resolves `undefined` and emits a `skipped` event. Put it above or below `@Cron()`, `@Interval()` or
 * `@Timeout()` of @nestjs/schedule, or on any provider method another scheduler calls (BullMQ
 * repeatable jobs, node-cron).
 *
 * @example
 * ```ts
 * @Cron(CronExpression.EVERY_MINUTE)
 * @LockedJob({ minHoldMs: 30_000, maxHoldMs: 10 * 60_000 })
 * async nightlyReport() { ... }     // key 'ReportJobs.nightlyReport'
 * ```
 */
export function LockedJob(options: LockedJobOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const where = `${typeof target === 'function' ? target.name : target.constructor.name}.${String(propertyKey)}`;
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new InvalidLockArgumentError(Messages.jobArgs(where, describe(options)));
    checkKnownFields(options, JOB_OPTION_NAMES, `@LockedJob() on ${where}`);
    const { minHoldMs = DEFAULT_JOB_MIN_HOLD_MS, ...rest } = options;
    const hold = minHoldMs === 0 ? {} : { minHoldMs };
    return Locked({ ...rest, ...hold, onBusy: 'skip', waitMs: 0 })(target, propertyKey, descriptor);
  };
}
