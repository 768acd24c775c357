import type { LockBackend } from '../../engine/lock-backend.js';

const closeNothing = async (): Promise<void> => undefined;

/**
 * @internal A backend object the user passed in stays theirs (it may be shared): used, never closed.
 * A Proxy that overrides `close` alone, so every other member of `LockBackend`, present or added
 * later, passes through as it is; methods are bound to the backend once (so private fields work).
 */
export function borrowedBackend(backend: LockBackend): LockBackend {
  const bound = new Map<PropertyKey, { original: Function; bound: Function }>();
  return new Proxy(backend, {
    get(target, property) {
      if (property === 'close') return closeNothing;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let cached = bound.get(property);
      if (cached?.original !== value)
        bound.set(
          property,
          (cached = { original: value, bound: (value as (...args: unknown[]) => unknown).bind(target) }),
        );
      return cached.bound;
    },
  });
}
