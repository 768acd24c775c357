import type { RequestParts } from './key-template.js';

/** HTTP requests that a `LockedInterceptor` handles, with the request parts it gives key templates. */
const intercepted = new WeakMap<object, RequestParts>();

/** Called by `LockedInterceptor`: `@Locked()` handlers of this request leave their lock errors to it. */
export function markIntercepted(request: unknown, parts: RequestParts): void {
  if (typeof request === 'object' && request !== null) intercepted.set(request, parts);
}

/** The request parts a `LockedInterceptor` gave for this request, or undefined when none handles it. */
export function interceptedParts(request: unknown): RequestParts | undefined {
  return typeof request === 'object' && request !== null ? intercepted.get(request) : undefined;
}
