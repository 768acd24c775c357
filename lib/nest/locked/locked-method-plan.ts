import type { CheckedLockOptions } from '../../engine/checked-lock-options.js';
import type { LockEngine } from '../../engine/lock-engine.js';
import type { LockOptions } from '../../engine/lock.js';
import type { HandlerKind } from '../nest-metadata.js';
import { decoratedParams, handlerKindOf } from '../nest-metadata.js';
import { bindLockKey, type KeyResolver, type ParsedKeys } from './key-template.js';
import type { CheckedLockedOptions } from './locked-options.js';
import { locateRequestPart } from './request-parts.js';

/** @internal How the calls of one `@Locked()` method run, worked out once from its options and its final metadata. */
export interface LockedMethodPlan {
  /** The context Nest calls it in as a handler; undefined for any other method. */
  readonly kind: HandlerKind | undefined;
  readonly resolveKey: KeyResolver;
  /** The options of one call in `engine`'s store, checked once per engine: one shared object unless a label is resolved from the call's arguments. */
  readonly optionsFor: (engine: LockEngine, self: unknown, args: readonly unknown[]) => CheckedLockOptions;
}

/** @internal What {@link planLockedMethod} reads. */
export interface LockedMethodSource {
  /** The prototype (or, for a static method, the class) the method is defined on. */
  readonly target: object;
  /** The class that declares the method: Nest keeps its parameter decorators there. */
  readonly declaringClass: Function;
  readonly name: string | symbol;
  readonly where: string;
  readonly options: CheckedLockedOptions;
  readonly parsedKey: ParsedKeys;
  readonly parsedLabel: ParsedKeys | undefined;
}

/**
 * @internal Plans a `@Locked()` method once its decorators have all been applied (at bootstrap, or at its
 * first call): whether Nest calls it as a handler, and which arguments carry the request parts
 * its key names. Throws InvalidLockArgumentError when a template names a part that no parameter
 * carries (the message says what to add).
 */
export function planLockedMethod({
  target,
  declaringClass,
  name,
  where,
  options,
  parsedKey,
  parsedLabel,
}: LockedMethodSource): LockedMethodPlan {
  // The function Nest calls carries the metadata of every decorator, those applied after @Locked() and any wrapper's around it included.
  const handler = (target as Record<string | symbol, unknown>)[name];
  const kind = typeof handler === 'function' ? handlerKindOf(handler) : undefined;
  const params = decoratedParams(declaringClass, name);
  const resolveKey = bindLockKey(parsedKey, where, (placeholder, template) =>
    locateRequestPart(placeholder, kind, params, where, template),
  );
  const { leaseMs, waitMs, mode, fair, permits, minHoldMs, maxHoldMs } = options;
  const base: LockOptions = { leaseMs, waitMs, mode, fair, permits, minHoldMs, maxHoldMs };
  // An application has one engine per store, a process sometimes several applications.
  const checked = new WeakMap<LockEngine, CheckedLockOptions>();
  const checkedFor = (engine: LockEngine): CheckedLockOptions => {
    let options = checked.get(engine);
    if (!options) checked.set(engine, (options = engine.checkOptions(base)));
    return options;
  };
  if (parsedLabel === undefined) return { kind, resolveKey, optionsFor: checkedFor };
  const labelOf = labelResolver(
    parsedLabel,
    where,
    (placeholder, template) => locateRequestPart(placeholder, kind, params, where, template),
    options.label,
  );
  return { kind, resolveKey, optionsFor: (engine, self, args) => checkedFor(engine).withLabel(labelOf(self, args)) };
}

/** A label resolver that never throws: a template naming something missing yields the template text. */
function labelResolver(
  parsed: ParsedKeys,
  where: string,
  locate: Parameters<typeof bindLockKey>[2],
  label: unknown,
): (self: unknown, args: readonly unknown[]) => string {
  const fallback = typeof label === 'string' ? label : 'label function failed';
  let resolve: KeyResolver;
  try {
    resolve = bindLockKey(parsed, where, locate);
  } catch {
    return () => fallback;
  }
  return (self, args) => {
    try {
      const value = resolve(self, args);
      return Array.isArray(value) ? value.join(',') : value;
    } catch {
      return fallback;
    }
  };
}
