import { DEFAULT_STORE_NAME } from '../lock-constants.js';
import type { LockMode } from '../../engine/lock-mode.js';
import {
  checkHoldBounds,
  checkLeaseMs,
  checkMode,
  checkPermits,
  checkWaitMs,
  describe,
} from '../../engine/lock-options.js';
import { InvalidLockArgumentError } from '../../errors.js';
import type { LockKey, LockKeys } from './key-template.js';
import { Messages } from '../lock-messages.js';
import { checkKnownFields } from '../../util/known-fields.js';

/** What `@Locked()` does when the lock stays busy for `waitMs`. */
export type OnBusy = 'throw' | 'skip';

/** Options of `@Locked({ ... })`. Unset fields take the module's defaults. */
export interface LockedOptions {
  /**
   * A template (`'order:{0.id}'`, `'inventory:{params.sku}'`; text without braces is a literal key)
   * or a function that receives the method's arguments and returns the key. A list of them
   * (`['account:{0}', 'account:{1}']`) locks all those keys or none, in sorted order, so calls
   * naming the same keys in different orders cannot deadlock; `current()` is then a `MultiLock`.
   * Omitted: `'ClassName.methodName'` of the class that declares the method (a subclass inheriting
   * it uses the same key); refused for a method named by a symbol or on an anonymous class.
   */
  key?: LockKeys;
  /** Lease length in ms (renewed while the method runs). Default: the module's `leaseMs`. */
  leaseMs?: number;
  /**
   * How long to wait for a busy lock. Default: the module's `waitMs`, except with
   * `onBusy: 'skip'`, where it is 0 (one attempt) unless set.
   */
  waitMs?: number;
  /**
   * `'throw'` (default): the call rejects with LockTimeoutError (409 Conflict over HTTP).
   * `'skip'`: the method is not run and the call resolves `undefined`, for jobs that must run
   * on one instance only.
   */
  onBusy?: OnBusy;
  /** `'exclusive'` (default) or `'write'` exclude everyone; `'read'` shares the key with other readers. */
  mode?: LockMode;
  /** Hand the lock to waiters in arrival order (see `LockOptions.fair`). */
  fair?: boolean;
  /** Makes the key a counting semaphore: at most `permits` calls run at once (see `LockService.semaphore`). */
  permits?: number;
  /** The lock store: the `name` of a `DistributedLockModule.forRoot({ name })`. Default: the unnamed store. */
  store?: string;
  /**
   * What the holder is doing, for operators (`LockService.inspect`, the CLI, the admin page): a
   * template like the key's (`'order {0.id}'`, `'{params.sku}'`) or a function of the arguments.
   * A template naming something missing leaves the template text as the label (it never fails the call).
   */
  label?: LockKey;
  /** Hold at least: the key stays taken until this long after the acquisition, even when the method ends first (see `LockOptions.minHoldMs`). */
  minHoldMs?: number;
  /** Hold at most: renewal stops this long after the acquisition and `current().signal` aborts (see `LockOptions.maxHoldMs`). */
  maxHoldMs?: number;
}

/** `LockedOptions` once checked: the store is always named. */
export type CheckedLockedOptions = Readonly<LockedOptions & { key: LockKeys; store: string }>;

const LOCKED_OPTION_NAMES = [
  'key',
  'leaseMs',
  'waitMs',
  'onBusy',
  'mode',
  'fair',
  'permits',
  'store',
  'label',
  'minHoldMs',
  'maxHoldMs',
];

/**
 * Validates `@Locked()`'s arguments when the decorator is applied, so a bad one fails at class
 * definition. `defaultKey`: the key when none is given (`'ClassName.methodName'`), undefined where
 * that would be ambiguous.
 */
export function parseLockedArgs(
  args: readonly unknown[],
  where: string,
  defaultKey: string | undefined,
): CheckedLockedOptions {
  const [first, leaseMs, waitMs] = args;
  if (args.length === 0) return checkOptions({}, where, defaultKey);
  if (typeof first !== 'object' || first === null || Array.isArray(first))
    return checkOptions(
      { key: first as LockKeys, leaseMs: leaseMs as number, waitMs: waitMs as number },
      where,
      defaultKey,
    );
  if (args.length > 1) throw new InvalidLockArgumentError(Messages.lockedArgs(where));
  checkKnownFields(first, LOCKED_OPTION_NAMES, `@Locked() on ${where}`);
  return checkOptions(first, where, defaultKey);
}

function checkOptions(options: LockedOptions, where: string, defaultKey: string | undefined): CheckedLockedOptions {
  const { leaseMs, waitMs, onBusy, mode, fair, permits, store, label, minHoldMs, maxHoldMs } = options;
  if (!('key' in options) && defaultKey === undefined)
    throw new InvalidLockArgumentError(Messages.lockedNoDefaultKey(where));
  const key = 'key' in options ? options.key! : defaultKey!;
  if (label !== undefined && typeof label !== 'function' && (typeof label !== 'string' || label.length === 0)) {
    throw new InvalidLockArgumentError(
      Messages.lockedOption(where, `label must be a non-empty string or a function, got ${describe(label)}`),
    );
  }
  if (onBusy !== undefined && onBusy !== 'throw' && onBusy !== 'skip') {
    throw new InvalidLockArgumentError(Messages.lockedOnBusy(where, describe(onBusy)));
  }
  if (permits !== undefined && Array.isArray(key))
    throw new InvalidLockArgumentError(Messages.lockedPermitsWithKeyList(where));
  if (store !== undefined && (typeof store !== 'string' || store.length === 0))
    throw new InvalidLockArgumentError(Messages.lockedStore(where, describe(store)));
  try {
    return Object.freeze({
      key: Array.isArray(key) ? Object.freeze([...(key as readonly string[])]) : key,
      leaseMs: leaseMs === undefined ? undefined : checkLeaseMs(leaseMs),
      waitMs: waitMs === undefined ? (onBusy === 'skip' ? 0 : undefined) : checkWaitMs(waitMs),
      onBusy: onBusy ?? 'throw',
      mode: mode === undefined ? undefined : checkMode(mode),
      fair: fair === undefined ? undefined : checkFair(fair),
      permits: permits === undefined ? undefined : checkPermits(permits),
      store: store ?? DEFAULT_STORE_NAME,
      ...(label === undefined ? {} : { label }),
      ...checkHoldBounds(minHoldMs, maxHoldMs),
    });
  } catch (error) {
    throw new InvalidLockArgumentError(Messages.lockedOption(where, (error as Error).message));
  }
}

function checkFair(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidLockArgumentError(`fair must be a boolean, got ${describe(value)}`);
  return value;
}
