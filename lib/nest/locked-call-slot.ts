import { LockedCall, LockedCallParam, lockedCallFactory } from './locked-call.js';

/** Where `@nestjs/common` keeps parameter decorators (by class and method name); not exported from its root, stable since Nest 5. */
const ROUTE_ARGS_METADATA = '__routeArguments__';

interface RouteArg {
  readonly index: number;
  readonly factory?: unknown;
}

/** The hidden `LockedCall` parameter of one decorated method. */
export interface LockedCallSlot {
  /** The argument position Nest fills with the `LockedCall`; -1 when there is none (static methods). */
  readonly index: number;
  /**
   * The arguments the method itself gets when Nest called it with `call`: the ones Nest would pass
   * without the hidden parameter. Only the innermost `@Locked()` removes it; the others pass it on.
   */
  argsFor(call: LockedCall, args: unknown[]): unknown[];
}

const NO_SLOT: LockedCallSlot = { index: -1, argsFor: (_call, args) => args };

/** The slots already added, per class and method: a second `@Locked()` on a method shares the first one's. */
const added = new WeakMap<object, Map<string | symbol, number>>();

/**
 * Gives the method a hidden parameter that Nest fills with a `LockedCall` when it calls the method
 * as a route (or rpc, ws, graphql) handler, past its real parameters so that they keep their
 * positions. Nest passes arguments up to the highest decorated position, so this costs an array
 * slot, not an interceptor. For other callers (a service calling the method) nothing changes.
 */
export function lockedCallSlot(target: object, propertyKey: string | symbol, original: Function): LockedCallSlot {
  if (typeof target === 'function') return NO_SLOT;
  const host = target.constructor;
  let slots = added.get(host);
  if (!slots) added.set(host, (slots = new Map()));
  const shared = slots.get(propertyKey);
  if (shared !== undefined) return { index: shared, argsFor: (_call, args) => args };
  const index = Math.max(original.length, lastOtherIndex(host, propertyKey) + 1);
  LockedCallParam()(target, propertyKey, index);
  slots.set(propertyKey, index);
  // Read when first called: decorators applied after @Locked() may still add parameters.
  let length: number | undefined;
  return {
    index,
    argsFor(call, args) {
      length ??= lastOtherIndex(host, propertyKey) + 1;
      // Without any parameter decorator, Nest passes an HTTP handler nothing, and other handlers their native arguments.
      if (length === 0) return call.http ? [] : (call.args as unknown[]);
      // `args` is the wrapper's own rest array, so it may be cut in place.
      if (index < length) args[index] = undefined;
      args.length = length;
      return args;
    },
  };
}

/** The highest position of a parameter decorator on the method other than `LockedCall`, or -1. */
function lastOtherIndex(host: object, propertyKey: string | symbol): number {
  const routeArgs = (Reflect.getMetadata(ROUTE_ARGS_METADATA, host, propertyKey) ?? {}) as Record<string, RouteArg>;
  let last = -1;
  for (const arg of Object.values(routeArgs)) {
    if (arg.factory !== lockedCallFactory && arg.index > last) last = arg.index;
  }
  return last;
}
