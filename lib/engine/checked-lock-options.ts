import { InvalidLockArgumentError } from '../errors.js';
import type { BackendCapabilities } from './lock-backend.js';
import { describe, type ResolvedLockOptions } from './lock-options.js';

/**
 * @internal Lock options checked once against one engine's defaults and store
 * (`LockEngine.checkOptions`), for a caller that takes many locks with the same options (`@Locked`):
 * `LockEngine.acquireScoped` takes them as they are, with no check per call.
 */
export class CheckedLockOptions {
  constructor(
    /** The engine they were checked by: its defaults are in `resolved`. */
    readonly checkedBy: object,
    readonly resolved: ResolvedLockOptions,
    /** Why the store refuses them (see {@link refusalOf}), if it does: each acquisition throws it with its key. */
    readonly refusal: string | undefined,
  ) {}

  /** The same options with `label` (a per-call label, resolved from the call). */
  withLabel(label: string): CheckedLockOptions {
    if (typeof label !== 'string') throw new InvalidLockArgumentError(`label must be a string, got ${describe(label)}`);
    return new CheckedLockOptions(this.checkedBy, { ...this.resolved, label }, this.refusal);
  }
}

/**
 * @internal Why a store with `capabilities` cannot take a lock with `options` (the message after
 * `Lock "<key>": `), or undefined when it can.
 */
export function refusalOf(
  options: ResolvedLockOptions,
  capabilities: BackendCapabilities = {},
  backendName: string,
): string | undefined {
  if (options.mode === 'read' && !capabilities.read) return notSupported("mode 'read'", backendName);
  if (options.fair && !capabilities.fair) return notSupported('fair: true', backendName);
  if (options.minHoldMs !== undefined) {
    if (!capabilities.minHold)
      return notSupported('minHoldMs (keeping a released key taken until it lapses in the store)', backendName);
    if (options.mode === 'read' || options.permits !== undefined)
      return 'minHoldMs applies to exclusive locks, not to read locks or semaphores';
  }
  if (options.permits === undefined) return undefined;
  if (!capabilities.semaphore) return notSupported('a semaphore (permits)', backendName);
  if (options.mode !== 'exclusive') return 'a semaphore permit has no mode; leave mode unset';
  if (options.fair) return 'fair semaphores are not supported';
  return undefined;
}

function notSupported(what: string, backendName: string): string {
  return `${what} is not supported by the ${backendName} backend`;
}
