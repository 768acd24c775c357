import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockEngine } from '../engine/lock-engine.js';

/** The parts of an HTTP request a key template may name (Express and Fastify requests both have them). */
export interface RequestParts {
  readonly params?: unknown;
  readonly query?: unknown;
  readonly body?: unknown;
  readonly headers?: unknown;
}

/** What `LockedInterceptor` knows about the route handler it is running. */
export interface HandlerContext {
  /** The function Nest calls: a `@Locked()` wrapper, or another decorator's wrapper around one. */
  readonly handler: Function;
  readonly request: RequestParts;
  /** The engine of the module that serves this request, when its lock module is visible there. */
  readonly engine: LockEngine | undefined;
}

const storage = new AsyncLocalStorage<HandlerContext>();

/** Runs `fn` (which starts the handler) with `context` visible to the `@Locked()` wrapper. */
export function runInHandlerContext<T>(context: HandlerContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The route handler context of this async call chain, if it is inside one. */
export function currentHandlerContext(): HandlerContext | undefined {
  return storage.getStore();
}
