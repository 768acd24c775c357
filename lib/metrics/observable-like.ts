import { InvalidLockArgumentError } from '../errors.js';

/** The part of an RxJS Observable the adapters use (`LockService.events`, `LockEngine.events`). */
export interface LockEventSource<T> {
  subscribe(observer: (value: T) => void): { unsubscribe(): void };
}

/** Stops an adapter: no more metrics or spans from the events it was given. */
export interface MetricsSubscription {
  unsubscribe(): void;
}

/** Imports an optional peer used by an adapter, or says which package to install. */
export async function loadPeer<T>(packageName: string, feature: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new InvalidLockArgumentError(`${feature} needs the "${packageName}" package: npm install ${packageName}`, { cause: error });
    }
    throw error;
  }
}
